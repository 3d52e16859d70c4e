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
