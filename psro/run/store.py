"""The checkpoint store: the one module that writes checkpoint files, and reads them back verified.

Every training loop keeps its checkpoint as a sealed JSON document (:func:`write_document`; the seal of
:mod:`psro.run.document_seal`) that names its array files with their SHA-256, and the files themselves
(:func:`write_arrays`, :func:`write_saved`). A file is written to a temporary file of the same folder, flushed to
disk and renamed over its name (:func:`psro.run.run_files.atomic_write`), always before the document that names
it; the document it replaces is kept as :func:`previous_name`, and the files only the dropped one listed are
removed once the new one reads back intact (:func:`replace_document`). :func:`read_document` and
:func:`read_arrays` read them back as regular files of the folder, the seal and every digest checked, no pickle
allowed; :func:`read_or_advise` says when the previous checkpoint is intact. PSRO's document
(:mod:`psro.run.checkpoint`), NFSP's (:mod:`psro.family.nfsp`) and offline PSRO's
(:mod:`psro.offline.coffee_psro`) are written and read through it.

Examples
--------
>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> entry = write_arrays(folder, "arrays", "000001", {"x": np.arange(3)})
>>> _ = write_document(folder, "run.json", {"iteration": 1, "arrays": entry}, lambda doc: [doc["arrays"]["file"]],
...                    prefixes=("arrays-",))
>>> path, document = read_document(folder, "run.json", previous=False, what="example")
>>> document["iteration"], read_arrays(folder, document["arrays"], path)["x"].tolist()
(1, [0, 1, 2])
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from psro.run.document_seal import is_sealed, seal_document, seal_problem, sha256
from psro.run.run_files import atomic_write, check_directory, check_target, file_in, read_regular

__all__ = ["prepare_directory", "write_named", "write_arrays", "write_saved", "write_document", "read_document",
           "read_arrays", "previous_name", "read_or_advise", "replace_document"]


def prepare_directory(directory) -> Path:
    """``directory`` as a ``Path``, created where missing and checked to be a folder a checkpoint may be written
    into (:func:`psro.run.run_files.check_directory`)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    check_directory(directory)
    return directory


def write_file(directory: Path, prefix: str, data: bytes, suffix: str) -> tuple:
    """Write ``data`` as ``<prefix>-<digest><suffix>`` (atomically; the digest's first 12 hex digits); return
    ``(name, SHA-256)``."""
    digest = sha256(data)
    name = f"{prefix}-{digest[:12]}{suffix}"
    atomic_write(Path(directory) / name, lambda fh: fh.write(data))
    return name, digest


def write_named(directory: Path, prefix: str, label: str, data: bytes) -> tuple:
    """Write ``data`` as ``<prefix>-<label>-<digest>.npz`` (:func:`write_file`); return ``(name, SHA-256)``."""
    return write_file(directory, f"{prefix}-{label}", data, ".npz")


def write_arrays(directory: Path, prefix: str, label: str, arrays: dict) -> dict:
    """Write ``arrays`` as one ``.npz`` (:func:`write_named`); return its entry ``{"file": name, "sha256": ...}``."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    name, digest = write_named(directory, prefix, label, buffer.getvalue())
    return {"file": name, "sha256": digest}


def write_saved(directory: Path, prefix: str, label: str, save: Callable[[Path], None]) -> tuple:
    """Write the file ``save(path)`` makes as ``<prefix>-<label>-<digest>.npz``: saved to a temporary name, flushed
    to disk, then renamed (on disk before a document names it); return ``(name, SHA-256)``."""
    directory = Path(directory)
    tmp = directory / f".{prefix}-{os.getpid()}.npz.tmp"
    try:
        save(tmp)
        digest = sha256(tmp.read_bytes())
        name = f"{prefix}-{label}-{digest[:12]}.npz"
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, directory / name)
    finally:
        tmp.unlink(missing_ok=True)
    return name, digest


def write_document(directory, name: str, document: dict, files_of, prefixes: tuple) -> Path:
    """Seal ``document`` and make it the latest checkpoint ``directory / name`` (:func:`replace_document`)."""
    return replace_document(directory, name, seal_document(document), files_of, prefixes)


def read_document(directory, name: str, previous: bool, what: str) -> tuple:
    """``(path, document)``: the sealed checkpoint document ``name`` of ``directory`` (``previous``: the one kept
    before it), read as a regular file of the folder with its seal checked; ``ValueError`` naming the file when
    it is missing, unreadable, damaged or sealed under another key (``what``: the loop, for the message)."""
    path = Path(directory) / (previous_name(name) if previous else name)
    try:
        text = read_regular(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable {what} checkpoint ({exc}).") from exc
    problem = seal_problem(text)
    if problem is not None:
        raise ValueError(f"{path} is damaged or refused: {problem}; the run cannot resume from it.")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not a readable {what} checkpoint ({exc}).") from exc
    if not isinstance(document, dict):
        raise ValueError(f"{path}: not a {what} checkpoint (a JSON {type(document).__name__}, not an object).")
    return path, document


def read_arrays(directory, entry, document_path: Path) -> dict:
    """The arrays of the ``.npz`` a document's ``entry`` (``{"file": ..., "sha256": ...}``) names, a regular file
    of ``directory`` whose SHA-256 must match (``ValueError`` naming it and ``document_path``); no pickle."""
    from games.memory_limit import check_npz

    entry = entry if isinstance(entry, dict) else {}
    path = file_in(Path(directory), entry.get("file"), "arrays.file")
    data = read_regular(path) if path.is_symlink() or path.exists() else None
    if data is None or sha256(data) != entry.get("sha256"):
        raise ValueError(f"{path} is missing or damaged (its SHA-256 does not match {Path(document_path).name}).")
    check_npz(io.BytesIO(data), str(path))   # (the shapes its headers declare, before any array)
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        return {k: arrays[k] for k in arrays.files}


def previous_name(name: str) -> str:
    """The file name the checkpoint document ``name`` keeps its predecessor under (``checkpoint.json`` ->
    ``checkpoint.previous.json``)."""
    return f"{name[:-5] if name.endswith('.json') else name}.previous.json"


def read_or_advise(read, previous: bool, resume: str) -> dict:
    """``read(previous)``: a checkpoint document. When the latest one (``previous=False``) is refused with a
    ``ValueError`` but ``read(True)`` gives the previous one, the error also says that and how to resume from it
    (``resume``: the call, e.g. ``"NFSP.resume('run/checkpoint', previous=True)"``).

    Examples
    --------
    >>> def read(previous):
    ...     if not previous:
    ...         raise ValueError("checkpoint.json is damaged.")
    ...     return {"iteration": 4}
    >>> read_or_advise(read, False, "Loop.resume('dir', previous=True)")
    Traceback (most recent call last):
    ...
    ValueError: checkpoint.json is damaged. The previous checkpoint (iteration 4) is intact: resume from it with \
Loop.resume('dir', previous=True) or `psro resume RUN_DIR --previous`.
    """
    try:
        return read(previous)
    except ValueError as exc:
        if previous:
            raise
        try:
            kept = read(True)
        except ValueError:
            raise exc from None
        raise ValueError(f"{exc} The previous checkpoint (iteration {kept['iteration']}) is intact: resume from it "
                         f"with {resume} or `psro resume RUN_DIR --previous`.") from None


def _link_name(previous: Path, pid) -> Path:
    """The temporary second name :func:`replace_document` gives the latest document before it becomes
    ``previous``."""
    return previous.with_name(f".{previous.name}.{pid}.tmp")


def _drop_stale_links(latest: Path, previous: Path) -> None:
    """Remove what a save killed between making its temporary link (:func:`_link_name`) and renaming it left: a
    second name of ``latest``, which would make ``latest`` a hard link the next save refuses. Only names of that
    pattern that are ``latest`` itself are removed; the document stays as it is under its own name."""
    if latest.is_symlink() or not latest.is_file():
        return
    for stale in latest.parent.glob(_link_name(previous, "*").name):
        if not stale.is_symlink() and stale.is_file() and os.path.samefile(stale, latest):
            stale.unlink()


def replace_document(directory, name: str, text: bytes, files_of, prefixes: tuple) -> Path:
    """Make the sealed document ``text`` the latest checkpoint ``directory / name``, keeping the one it replaces.

    The document there now (when its SHA-256 holds: a damaged one never becomes
    the previous) is kept as :func:`previous_name` ``(name)``; then ``text`` is
    written atomically and read back, and every file ``files_of(document)``
    names must exist. Only then are the files the dropped document (the
    previous one before this call) listed, and that neither document now
    names, removed: only ``.npz`` files of this directory whose names start
    with ``prefixes``, so no other file (a user's, another run's) is ever
    deleted. A link or a non-regular file at either document's name is
    refused (:class:`psro.run.run_files.UnsafePath`). Returns the path.

    Examples
    --------
    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "data-of-my-experiment.npz").write_bytes(b"mine")
    >>> for k in (1, 2, 3):
    ...     _ = (folder / f"data-{k}.npz").write_bytes(b"x")
    ...     text = seal_document({"iteration": k, "file": f"data-{k}.npz"})
    ...     _ = replace_document(folder, "run.json", text, lambda doc: [doc["file"]], prefixes=("data-",))
    >>> sorted(f.name for f in folder.iterdir())
    ['data-2.npz', 'data-3.npz', 'data-of-my-experiment.npz', 'run.json', 'run.previous.json']
    >>> json.loads((folder / "run.previous.json").read_text())["iteration"]
    2
    """
    directory = check_directory(directory)
    latest, previous = file_in(directory, name), file_in(directory, previous_name(name))
    _drop_stale_links(latest, previous)
    latest, previous = check_target(latest, shared_with=previous), check_target(previous, shared_with=latest)
    dropped = set()
    shared = latest.is_file() and previous.is_file() and os.path.samefile(latest, previous)
    if latest.is_file() and not shared and _document_intact(latest):   # (shared: kept already, by a stopped save)
        dropped = _listed(previous, files_of)   # (the previous document is replaced: its files may go)
        link = _link_name(previous, os.getpid())
        link.unlink(missing_ok=True)
        try:
            os.link(latest, link)   # the same, already durable, file under a second name: no copy
            os.replace(link, previous)
        except OSError:   # a file system without hard links: copy it
            link.unlink(missing_ok=True)
            old = read_regular(latest)
            atomic_write(previous, lambda fh: fh.write(old))
    atomic_write(latest, lambda fh: fh.write(text), shared_with=previous)   # (the one hard link: made just above)
    if read_regular(latest) != text:
        raise OSError(f"{latest} did not read back as written; the previous checkpoint is kept")
    keep = set(files_of(json.loads(text)))
    for file in keep:
        if not file_in(directory, file).is_file():
            raise OSError(f"{directory / file} is missing right after it was written; the previous checkpoint is "
                          "kept")
    keep |= _listed(previous, files_of)
    for old_name in dropped - keep:
        old_file = directory / old_name
        if old_name.startswith(prefixes) and old_name.endswith(".npz") and old_file.is_file() \
                and not old_file.is_symlink():
            old_file.unlink(missing_ok=True)
    return latest


def _listed(path: Path, files_of) -> set:
    """The file names (plain names of its directory) the sealed document ``path`` lists; none for a missing or
    damaged one."""
    try:
        text = read_regular(path)
        if not is_sealed(text):
            return set()
        names = set(files_of(json.loads(text)))
        for name in names:
            file_in(path.parent, name)
        return names
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return set()


def _document_intact(path: Path) -> bool:
    """Whether a checkpoint document matches its own SHA-256 (its array files are not read)."""
    return is_sealed(read_regular(path))
