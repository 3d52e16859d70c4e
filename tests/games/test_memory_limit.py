"""games.memory_limit: the limit (PSRO_MAX_MEMORY or half the available memory) and the check before allocation."""

import tracemalloc

import pytest

from games.memory_limit import ENV_VAR, MemoryLimitExceeded, available_half, check_memory, memory_limit, parse_bytes


@pytest.mark.parametrize("text, nbytes", [("4096", 4096), ("64G", 64 * 2**30), ("1.5 MiB", 3 * 2**19),
                                          ("2t", 2 * 2**40), ("512KB", 512 * 1024), ("1e3", 1000)])
def test_parse_bytes_reads_units_as_powers_of_1024(text, nbytes):
    assert parse_bytes(text) == nbytes


@pytest.mark.parametrize("text", ["", "lots", "-5G", "0", "nan", "1X", "inf"])
def test_parse_bytes_refuses_what_is_not_a_size(text):
    with pytest.raises(ValueError, match="PSRO_MAX_MEMORY must be a number of bytes"):
        parse_bytes(text)


def test_the_limit_is_the_variable_when_set_else_half_the_available_memory(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert abs(memory_limit() - available_half()) < 2**30   # (the available memory moves a little between reads)
    monkeypatch.setenv(ENV_VAR, "3G")
    assert memory_limit() == 3 * 2**30
    monkeypatch.setenv(ENV_VAR, "three")
    with pytest.raises(ValueError, match="PSRO_MAX_MEMORY"):
        memory_limit()


def test_check_memory_names_the_size_the_estimate_and_the_limit(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "1G")
    assert check_memory(2**30, "exactly the limit") == 2**30
    with pytest.raises(MemoryLimitExceeded, match=r"^hidden=\[9\] needs about 2 GiB, above the memory limit of 1 GiB "
                                                  r"\(PSRO_MAX_MEMORY\)\. Narrower\. Raise the limit"):
        check_memory(2 * 2**30, "hidden=[9]", "Narrower.")
    with pytest.raises(ValueError, match="needs about"):   # (a subclass of ValueError) and NaN is never below
        check_memory(float("nan"), "x")
    monkeypatch.delenv(ENV_VAR)
    with pytest.raises(MemoryLimitExceeded, match=r"\(half the memory available now\)"):
        check_memory(10.0**18, "x")


def test_random_game_past_the_limit_is_refused_before_allocating(monkeypatch):
    # issue 23 item 5: catalog:random_game(shape=(30000, 30000)) ended in a 13 GiB MemoryError
    from games import catalog

    monkeypatch.setenv(ENV_VAR, "1G")
    tracemalloc.start()
    try:
        with pytest.raises(MemoryLimitExceeded, match=r"random_game\(shape=\(30000, 30000\)\) needs about 13.4 GiB"):
            catalog.random_game((30000, 30000))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    assert catalog.random_game((3, 4), rng=0).shape == (3, 4)   # small games are untouched


# -- issue 36: ulimit -v and cgroup limits, files checked before they are read ----------------------------------------


def test_the_default_limit_takes_the_smallest_of_memory_ulimit_and_cgroup(monkeypatch, tmp_path):
    import resource

    from games import memory_limit as module

    monkeypatch.delenv(ENV_VAR, raising=False)
    cgroup_room = module._cgroup_room
    monkeypatch.setattr(module, "_machine_available", lambda: 64 * 2**30)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (8 * 2**30, resource.RLIM_INFINITY))
    monkeypatch.setattr(module, "_cgroup_room", lambda: None)
    assert memory_limit() == 4 * 2**30   # (ulimit -v 8G, halved)
    limit, current = tmp_path / "memory.max", tmp_path / "memory.current"
    limit.write_text(f"{3 * 2**30}\n")
    current.write_text(f"{2**30}\n")
    assert cgroup_room((str(limit), str(current))) == 2 * 2**30
    monkeypatch.setattr(module, "_cgroup_room", lambda: 2 * 2**30)
    assert memory_limit() == 2**30   # (the cgroup's room, halved)
    limit.write_text("max\n")
    assert cgroup_room((str(limit), str(current))) is None


def test_a_sparse_file_is_refused_from_its_size_without_reading(tmp_path, monkeypatch):
    from games.memory_limit import check_file

    monkeypatch.setenv(ENV_VAR, "1M")
    path = tmp_path / "dataset-0123.csv"
    with open(path, "wb") as fh:
        fh.truncate(30 * 2**30)
    with pytest.raises(MemoryLimitExceeded, match="dataset-0123.csv.*memory limit of 1 MiB"):
        check_file(path)


def test_an_npz_header_declaring_a_huge_shape_is_refused_before_loading(tmp_path, monkeypatch):
    import zipfile

    import numpy as np
    from numpy.lib import format as npy

    from games.empirical import EmpiricalGame
    from games.memory_limit import check_npz

    monkeypatch.setenv(ENV_VAR, "1G")
    path = tmp_path / "meta_game.npz"
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open("count.npy", "w") as member:
            npy.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**7)})
    with pytest.raises(MemoryLimitExceeded, match="meta_game.npz"):
        check_npz(path, str(path))
    with pytest.raises(MemoryLimitExceeded, match="headers declare"):
        EmpiricalGame.load(path)
    np.savez(tmp_path / "small.npz", a=np.zeros(4))
    assert check_npz(tmp_path / "small.npz", "small.npz") == 32
