"""Checkpoints of a PSRO run: written atomically after every iteration, verified on load, resumed bit for bit.

A checkpoint directory holds

* ``checkpoint.json``: the commit point. The solver's constructor options,
  the run config (when the CLI wrote it), the loop state (iteration, gaps,
  evaluation count, times), the random generator's state
  (``bit_generator.state``) and the history rows; it names its array files
  and carries the **manifest**: the schema version and the SHA-256 of each
  array file. It is JSON with sorted keys and no spaces whose last entry,
  ``"sha256"``, is the SHA-256 of the file's bytes before it (with the closing
  brace), so every byte of it is checked;
* ``arrays-<iteration>-<digest>.npz``: the populations' provenance, the best
  responses waiting to join, the meta-strategy, and the state of a Monte
  Carlo top-up in progress (its meta-strategy and a round's target counts);
* ``policies-<iteration>-<digest>.npz``: the policies that joined the
  populations since the save before (a policy never changes once in a
  population, so each save writes only the new ones; the document lists the
  files and the rows each holds). Policy objects (a learned run's networks,
  :class:`psro.policies.population.PolicyPopulation`) are plain arrays there too,
  ``member_<p>_<k>__<name>`` (:func:`member_arrays`: a network's weights), with
  their architectures as JSON in the document's ``members``, so they are
  covered by the manifest and the document's digest; nothing is pickled;
* ``meta_game-<iteration>-<digest>.npz``: the :class:`games.EmpiricalGame`;
* ``checkpoint.previous.json``: the checkpoint before, with its array files,
  kept until the next one is written and verified.

Every file is written to a temporary file in the same directory, flushed to
disk (``fsync``) and renamed over its final name (``os.replace``), through
:func:`psro.run.run_files.atomic_write`: a symbolic link or a non-regular file
at a name, or a linked checkpoint folder, is refused. The array files of an
iteration are written before the JSON that names them; the previous JSON is
copied aside before the new one replaces it, and the array files the dropped
previous JSON listed, when neither JSON names them now, are removed only after
the new one reads back intact (no other file of the folder is ever removed). So a
process killed at any moment leaves the last complete checkpoint readable. No
pickle anywhere (``allow_pickle=False``); every file is read as a regular file of
the folder (:func:`psro.run.run_files.read_regular`: no link followed, no FIFO
or device opened).

The seal: the document ends with the SHA-256 of its bytes, which detects damage
but not forgery (anyone can recompute it). With a secret in the environment
variable ``PSRO_CHECKPOINT_KEY`` the seal is an HMAC-SHA256 under it instead
(:func:`seal_document`), and a checkpoint sealed with another key, or with none,
is refused (:func:`seal_problem`); NFSP's and offline PSRO's checkpoints use the
same seal.

:func:`load_checkpoint` checks everything before anything runs: the schema
version, every digest (a flipped bit, a truncated or missing file, a hand
edit), the document's structure and its internal consistency (history rows
against the iteration, population sizes against the arrays and the
meta-game, ...), and that the stored executor names at most an engine and a
worker count (:func:`games.executors.spec_from_portable`): a checkpoint never
decides where or how code runs. Any damage is a ``ValueError`` that names the
file and says whether the previous checkpoint is intact (``previous=True``,
``psro resume RUN_DIR --previous``).

:meth:`psro.PSRO.run` writes one after every iteration; a run killed in the
middle of one resumes at the start of that iteration. A checkpoint may also be
written in the middle of the evaluation phase (``PSRO.save_checkpoint`` from
an ``on_evaluation_batch`` hook, e.g. after each Monte Carlo batch): the
resumed run keeps the blocks already evaluated and evaluates only the rest.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import weakref
import zipfile
import zlib
from pathlib import Path

import numpy as np

from games.empirical import EmpiricalGame
from games.executors import spec_from_portable
from games.memory_limit import check_npz
from games.normal_form import NormalFormGame
from games.validation import is_integer
from psro.deprecation import moved_names
from psro.errors import ConfigError
from psro.evaluation.top_up import TopUpProgress
from psro.loop.state import LoopState
from psro.policies.codec import decode_policy, encode_policy
from psro.policies.population import PolicyPopulation, Provenance
from psro.run.checkpoint_checks import Damage, check_arrays, check_document
from psro.run.document_seal import seal_problem, sha256
from psro.run.run_files import UnsafePath, atomic_write, read_regular
from psro.run.store import (
    prepare_directory,
    previous_name,
    read_or_advise,
    replace_document,
    write_arrays,
    write_document,
    write_saved,
)
from solvers import make_equilibrium

__all__ = ["CHECKPOINT_FILE", "PREVIOUS_FILE", "SCHEMA_VERSION", "PREFIXES", "save_checkpoint", "state_document",
           "manifest_files", "load_checkpoint", "restoring", "solver_options", "adopt_policy_files",
           "state_from_document", "replay_warm_start", "has_checkpoint", "atomic_write", "member_arrays",
           "member_from_arrays", "previous_name", "read_or_advise", "replace_document"]

logger = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.json"
PREVIOUS_FILE = "checkpoint.previous.json"   # previous_name(CHECKPOINT_FILE)
SCHEMA_VERSION = 3
#: The name prefixes of the files a PSRO checkpoint lists (:func:`psro.run.store.replace_document`)
PREFIXES = ("arrays-", "meta_game-", "policies-")
FORMAT_VERSION = SCHEMA_VERSION   # the name older code used
#: The schema versions this version reads: 2 had no policy objects (``members``) nor the approximate-gap columns
#: (old history rows read them as NaN)
READABLE_VERSIONS = (2, 3)
def has_checkpoint(directory) -> bool:
    """Whether ``directory`` holds a checkpoint (the latest, or only the previous one).

    Examples
    --------
    >>> has_checkpoint("/nonexistent")
    False
    """
    directory = Path(directory)
    return (directory / CHECKPOINT_FILE).is_file() or (directory / PREVIOUS_FILE).is_file()


#: Per solver and checkpoint directory, the policy files already written for it (populations only grow and a
#: policy never changes once in one, so each save writes only the policies added since the last)
_POLICY_FILES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: Once a checkpoint has this many policy files, the next save writes all the policies as one file again
#: (a run directory keeps a bounded number of files; the full write is paid once per that many saves)
MAX_POLICY_FILES = 32


def _policy_files(directory: Path, solver) -> list:
    """The policy files of ``solver`` in ``directory``: those already there, plus one with the newer policies.

    Each entry is ``{"file": name, "start": [...], "end": [...], "sha256": digest}`` (rows ``start[p]`` to
    ``end[p]`` of player p's population).
    """
    key = str(directory.resolve())
    known = [entry for entry in _POLICY_FILES.get(solver, {}).get(key, [])]
    sizes = [len(pop) for pop in solver.state.populations]
    if len(known) >= MAX_POLICY_FILES or not all((directory / entry["file"]).is_file() for entry in known) \
            or (known and any(e > k for e, k in zip(known[-1]["end"], sizes))):
        known = []   # too many files, or one went missing: write them all again
    done = known[-1]["end"] if known else [0] * len(sizes)
    if known == [] or done != sizes:
        chunk = {}
        for p, pop in enumerate(solver.state.populations):
            chunk.update(_population_arrays(f"member_{p}", pop.policies[done[p]:], start=done[p],
                                            objects=isinstance(pop, PolicyPopulation), key=f"policies_{p}"))
        entry = write_arrays(directory, "policies", f"{solver.state.iteration:06d}", chunk)
        known = known + [{"file": entry["file"], "start": list(done), "end": list(sizes), "sha256": entry["sha256"]}]
    _POLICY_FILES.setdefault(solver, {})[key] = known
    return known


def member_arrays(policy) -> tuple:
    """``(architecture, arrays)`` of a population member, what a checkpoint stores of it without pickle: a JSON-able
    dict saying what it is, and the plain arrays it needs (:func:`member_from_arrays` rebuilds it). This is the
    policy codec, :func:`psro.policies.codec.encode_policy`.

    A tabular array is ``{"kind": "tabular"}`` with its ``table``; the uniform policy
    (:class:`psro.policies.UniformPolicy`) ``{"kind": "uniform", "num_actions": A}``; a neural policy
    ``{"kind": "neural", "architecture": policy.architecture()}`` with ``policy.to_arrays()`` (its weights); a
    user's policy class of the codec protocol ``{"kind": "module:Class", "architecture": ...}``.

    Examples
    --------
    >>> member_arrays(np.eye(2))[0], sorted(member_arrays(np.eye(2))[1])
    ({'kind': 'tabular'}, ['table'])
    >>> arch, arrays = member_arrays(member_from_arrays({"kind": "uniform", "num_actions": 3}, {}))
    >>> arch, arrays
    ({'kind': 'uniform', 'num_actions': 3}, {})
    """
    return encode_policy(policy)


def member_from_arrays(architecture: dict, arrays: dict):
    """The member :func:`member_arrays` described (:func:`psro.policies.codec.decode_policy`: a ``module:Class``
    kind imports its module only under the rule of :mod:`games.registry`).

    Examples
    --------
    See :func:`member_arrays`.
    """
    return decode_policy(architecture, arrays)


def _population_arrays(prefix: str, policies, start: int, objects: bool, key: str) -> dict:
    """The arrays that store ``policies`` (rows ``start, start + 1, ...``): a stack under ``key``, or for policy
    objects an empty ``(k, 0, 0)`` stack under ``key`` and each member's arrays under ``<prefix>_<row>__<name>``."""
    if not objects:
        return {key: np.asarray(policies)}
    out = {key: np.zeros((len(policies), 0, 0))}
    for k, policy in enumerate(policies):
        out.update({f"{prefix}_{start + k}__{name}": value for name, value in member_arrays(policy)[1].items()})
    return out


def _member_architectures(state: LoopState):
    """Per player, the architectures of its members and of its waiting responses (None for tabular runs)."""
    if not isinstance(state.populations[0], PolicyPopulation):
        return None
    return {"populations": [[member_arrays(policy)[0] for policy in pop.policies] for pop in state.populations],
            "pending": [[member_arrays(policy)[0] for policy, _ in pending] for pending in state.pending]}


def _members(arch: list, arrays: dict, prefix: str) -> list:
    """Rebuild the members stored under ``<prefix>_<row>__<name>`` with their architectures ``arch``."""
    out = []
    for k, architecture in enumerate(arch):
        head = f"{prefix}_{k}__"
        out.append(member_from_arrays(architecture, {name[len(head):]: value for name, value in arrays.items()
                                                     if name.startswith(head)}))
    return out


def _state_arrays(state: LoopState) -> dict:
    """The arrays of a checkpoint's array file: each population's provenance and waiting best responses, the
    meta-strategies, the top-up's target and strategy."""
    arrays = {}
    for p, pop in enumerate(state.populations):
        table = pop.provenance_table()
        arrays[f"iteration_{p}"] = table["iteration"].to_numpy(dtype=np.int64)
        arrays[f"oracle_{p}"] = table["oracle"].to_numpy(dtype=str)
        arrays[f"meta_solver_{p}"] = table["meta_solver"].to_numpy(dtype=str)
        arrays[f"value_{p}"] = table["value"].to_numpy(dtype=np.float64)
        pending = state.pending[p]
        if isinstance(pop, PolicyPopulation):
            arrays.update(_population_arrays(f"pending_{p}", [pol for pol, _ in pending], start=0, objects=True,
                                             key=f"pending_{p}"))
        else:
            info = pop.infostates
            arrays[f"pending_{p}"] = (np.stack([pol for pol, _ in pending]) if pending
                                      else np.zeros((0, info.num_infostates, info.num_actions)))
        arrays[f"pending_value_{p}"] = np.array([v for _, v in pending], dtype=np.float64)
    for prefix, eq in (("meta", state.meta_strategy), ("eval_meta", state.eval_meta_strategy)):
        if eq is not None:
            arrays[f"{prefix}_joint"] = np.asarray(eq.joint)
            for p, m in enumerate(eq.marginals):
                arrays[f"{prefix}_marginal_{p}"] = np.asarray(m)
    topped = state.top_up
    if topped.target is not None:
        arrays["top_up_target"] = np.asarray(topped.target, dtype=np.int64)
    if topped.strategy is not None:
        arrays["top_up_strategy"] = np.asarray(topped.strategy, dtype=np.float64)
    return arrays


def _state_entry(state: LoopState) -> dict:
    """The document's ``state``: the loop's scalars and what its meta-strategies and top-up are."""

    def method_of(eq):
        return None if eq is None else {"concept": eq.concept, "method": eq.method}

    topped = state.top_up
    return {
        "iteration": state.iteration,
        "gap": state.gap,
        "train_gap": state.train_gap,
        "evaluations": state.evaluations,
        "in_iteration": state.in_iteration,
        "sizes_before": [int(k) for k in state.sizes_before],
        "wall_time": state.wall,
        "cpu_time": state.cpu,
        "env_steps": int(state.env_steps),
        "measure_episodes": int(state.measure_episodes),
        "meta_strategy": method_of(state.meta_strategy),
        "eval_meta_strategy": method_of(state.eval_meta_strategy),
        "top_up": {"key": [int(k) for k in topped.key], "round": topped.round, "spent": topped.spent},
    }


def save_checkpoint(directory, solver, config: dict | None = None) -> Path:
    """Write the checkpoint of ``solver`` (a :class:`psro.PSRO`: its ``options`` and its
    :class:`psro.loop.state.LoopState`) into ``directory``; return the JSON's path.

    ``config`` (a plain dict, e.g. ``PSROConfig.to_dict()``) is stored with it;
    when not given, the ``config`` of the previous checkpoint there is kept.
    The checkpoint it replaces becomes ``checkpoint.previous.json`` (with its
    array files) once the new one reads back intact.

    Examples
    --------
    >>> import tempfile
    >>> from psro import PSRO
    >>> solver = PSRO("kuhn_poker", progress=False)
    >>> _ = solver.run(iterations=1)
    >>> out = tempfile.mkdtemp()
    >>> save_checkpoint(out, solver).name
    'checkpoint.json'
    >>> load_checkpoint(out)["state"]["iteration"]
    1
    """
    directory = prepare_directory(directory)
    return write_document(directory, CHECKPOINT_FILE, state_document(directory, solver, config), manifest_files,
                          PREFIXES)


def manifest_files(document: dict) -> dict:
    """The files a PSRO checkpoint document lists (its ``manifest``: ``{name: SHA-256}``)."""
    return document.get("manifest", {})


def state_document(directory: Path, solver, config: dict | None = None) -> dict:
    """The checkpoint document of ``solver`` (:meth:`psro.PSRO.state_dict`), its files written into ``directory``
    first: the state's arrays, the policy files not yet written (:func:`_policy_files`) and the meta-game, each
    listed in the ``manifest`` with its SHA-256. ``config`` as in :func:`save_checkpoint`."""
    state = solver.state
    t = state.iteration
    if config is None:
        config = getattr(solver, "run_config", None)
    if config is None and (directory / CHECKPOINT_FILE).is_file():
        try:
            config = load_checkpoint(directory, arrays=False).get("config")
        except ValueError:
            logger.warning("the checkpoint in %s is damaged; the new one is written without its run config",
                           directory)

    arrays = write_arrays(directory, "arrays", f"{t:06d}", _state_arrays(state))
    policy_files = _policy_files(directory, solver)
    meta_name, meta_digest = write_saved(directory, "meta_game", f"{t:06d}", state.meta_game.save)
    return {
        "version": SCHEMA_VERSION,
        "generation": 1 + max(_generation(directory / CHECKPOINT_FILE), _generation(directory / PREVIOUS_FILE)),
        "iteration": t,
        "arrays": arrays["file"],
        "meta_game": meta_name,
        "options": solver.options,
        "config": config,
        "state": _state_entry(state),
        "rng": state.rng.bit_generator.state,
        "extra": state.extra.to_document(),
        "history": state.rows,
        "policy_files": [{k: v for k, v in entry.items() if k != "sha256"} for entry in policy_files],
        "members": _member_architectures(state),
        "manifest": {arrays["file"]: arrays["sha256"], meta_name: meta_digest,
                     **{entry["file"]: entry["sha256"] for entry in policy_files}},
    }


def _generation(path: Path) -> int:
    """The ``generation`` of the sealed checkpoint document at ``path``: it counts the checkpoints written into a
    directory, one more with each (0 for a missing, damaged or older document)."""
    try:
        text = read_regular(path)
        generation = json.loads(text).get("generation", 0) if seal_problem(text) is None else 0
    except (OSError, ValueError, AttributeError):
        return 0
    return generation if is_integer(generation) and generation >= 0 else 0


def _check_not_rolled_back(directory: Path, document: dict) -> None:
    """Refuse a latest checkpoint that is not newer than the previous one, as sealed by its own key: a rollback (an
    older checkpoint, ``checkpoint.previous.json`` say, copied over ``checkpoint.json``), which its seal alone
    cannot tell."""
    latest, previous = document.get("generation"), _generation(directory / PREVIOUS_FILE)
    try:   # (one file under both names: a save stopped between keeping the previous and writing the latest)
        same = os.path.samefile(directory / CHECKPOINT_FILE, directory / PREVIOUS_FILE)
    except OSError:
        same = False
    if is_integer(latest) and previous and latest <= previous and not same:
        raise ValueError(f"checkpoint file {str(directory / CHECKPOINT_FILE)!r} is older than the previous "
                         f"checkpoint {PREVIOUS_FILE} (its generation {latest} is not above {previous}): an older "
                         "checkpoint was copied over the latest (a rollback). It is not resumed; restore the latest "
                         "checkpoint, or resume the one before it with `psro resume RUN_DIR --previous`.")


def _intact(directory: Path, name: str) -> bool:
    try:
        _load(directory, name, arrays=True)
    except (Damage, ValueError, OSError):
        return False
    return True


def load_checkpoint(directory, arrays: bool = True, previous: bool = False) -> dict:
    """Read and verify a checkpoint: the JSON document, plus ``"arrays"`` (a dict) and ``"meta_game_object"``.

    Parameters
    ----------
    directory : str or Path
        The checkpoint directory (a run directory's ``checkpoint/``).
    arrays : bool
        Also read (and verify) the array files; without them only the JSON
        document is read and checked.
    previous : bool
        Read ``checkpoint.previous.json``, the checkpoint before the latest
        (what to resume from when the latest is damaged).

    Raises
    ------
    ValueError
        When ``directory`` holds no checkpoint, or a damaged one: the message
        names the file, what is wrong with it, and whether the previous
        checkpoint is intact.

    Examples
    --------
    >>> load_checkpoint("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: checkpoint_dir '/nonexistent' holds no checkpoint.json; ...
    """
    directory = Path(directory)
    name = PREVIOUS_FILE if previous else CHECKPOINT_FILE
    if not (directory / name).is_file():
        if previous:
            raise ValueError(f"checkpoint_dir {str(directory)!r} holds no {PREVIOUS_FILE} (no previous checkpoint "
                             "is kept before the second one is written); resume from the latest one.")
        if not (directory / PREVIOUS_FILE).is_file():
            raise ValueError(f"checkpoint_dir {str(directory)!r} holds no {CHECKPOINT_FILE}; was the run started "
                             "with a run directory (psro run ... --out RUN_DIR)?")
        raise ValueError(f"checkpoint file {str(directory / CHECKPOINT_FILE)!r} is missing. "
                         + _advice(directory, previous))
    try:
        document = _load(directory, name, arrays)
    except Damage as damage:
        raise ValueError(f"checkpoint file {str(damage.file)!r} is {damage.verdict}: {damage.what}. It cannot be "
                         "resumed. " + _advice(directory, previous)) from None
    if not previous:
        _check_not_rolled_back(directory, document)
    return document


def _advice(directory: Path, previous: bool) -> str:
    if not previous and (directory / PREVIOUS_FILE).is_file() and _intact(directory, PREVIOUS_FILE):
        document = json.loads(read_regular(directory / PREVIOUS_FILE))
        return (f"The previous checkpoint {str(directory / PREVIOUS_FILE)!r} (iteration {document['iteration']}) "
                f"is intact: resume from it with PSRO.resume({str(directory)!r}, previous=True) or "
                f"`psro resume RUN_DIR --previous`.")
    return ("No intact earlier checkpoint is kept here: start the run again (for a run directory from elsewhere, "
            "get an undamaged copy).")


def _load(directory: Path, name: str, arrays: bool) -> dict:
    path = directory / name
    try:
        text = read_regular(path).decode()
        document = json.loads(text)
    except UnsafePath as exc:
        raise Damage(path, str(exc), verdict="refused") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Damage(path, f"not valid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise Damage(path, "not a JSON object")
    version = document.get("version")
    if version not in READABLE_VERSIONS:
        raise Damage(path, f"schema version {version!r}; this version of the toolkit reads {SCHEMA_VERSION} "
                            "(checkpoints without a manifest cannot be verified)")
    problem = seal_problem(text.encode())
    if problem is not None:
        raise Damage(path, problem)
    check_document(document, path)
    document["file"], document["arrays_file"] = str(path), document["arrays"]
    if arrays:
        data = _verify_files(directory, path, document)
        document["arrays"] = _read_npz(directory, document["arrays"], data)
        chunks = [_read_npz(directory, entry["file"], data) for entry in document["policy_files"]]
        for p in range(len(document["state"]["sizes_before"])):
            parts = []
            for entry, chunk in zip(document["policy_files"], chunks):
                part = chunk.get(f"policies_{p}")
                if part is None or part.ndim != 3 or part.shape[0] != entry["end"][p] - entry["start"][p]:
                    raise Damage(path, f"{entry['file']} does not hold rows {entry['start'][p]} to "
                                        f"{entry['end'][p]} of player {p}'s policies")
                parts.append(part)
            if parts and any(part.shape[1:] != parts[0].shape[1:] for part in parts):
                raise Damage(path, f"the policy files of player {p} disagree in shape")
            document["arrays"][f"policies_{p}"] = np.concatenate(parts) if parts else np.zeros((0, 0, 0))
        for chunk in chunks:   # (the arrays of policy objects)
            document["arrays"].update({k: v for k, v in chunk.items() if k.startswith("member_")})
        try:
            check_npz(io.BytesIO(data[document["meta_game"]]), str(directory / document["meta_game"]))
            document["meta_game_object"] = EmpiricalGame.load(io.BytesIO(data[document["meta_game"]]))
        except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
            raise Damage(directory / document["meta_game"], f"unreadable ({type(exc).__name__}: {exc})") from None
        check_arrays(document, path)
    return document


def _read_npz(directory: Path, name: str, data: dict) -> dict:
    try:
        check_npz(io.BytesIO(data[name]), str(directory / name))   # (the headers' shapes, before any array)
        with np.load(io.BytesIO(data[name]), allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise Damage(directory / name, f"unreadable ({type(exc).__name__}: {exc})") from None


def _verify_files(directory: Path, path: Path, document: dict) -> dict:
    """The bytes of the files the manifest lists, each checked against its SHA-256."""
    data = {}
    for name, digest in document["manifest"].items():
        file = directory / name
        if not file.is_file():
            raise Damage(file, f"missing (the checkpoint {path.name} names it)")
        try:
            content = read_regular(file)
        except UnsafePath as exc:
            raise Damage(file, str(exc), verdict="refused") from None
        if sha256(content) != digest:
            raise Damage(file, f"its SHA-256 does not match the manifest in {path.name} (a changed byte, a "
                                "truncated or replaced file)")
        data[name] = content
    return data


@contextlib.contextmanager
def restoring(document: dict):
    """Turn any error while a checkpoint document is turned into a run into a ``ValueError`` naming the file."""
    from games.imported_games import from_untrusted_file

    try:
        with from_untrusted_file():   # a game named "module:Name" in the file is imported only if confirmed
            yield
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
        source = document.get("file", "the checkpoint") if isinstance(document, dict) else "the checkpoint"
        raise ValueError(f"checkpoint file {source!r} cannot be restored: {type(exc).__name__}: {exc}") from None


def solver_options(document: dict, executor=None) -> dict:
    """The constructor options a checkpoint stores, its executor made runnable (or replaced by ``executor``)."""
    options = dict(document["options"])
    options["executor"] = spec_from_portable(options.get("executor"), name="options.executor")
    if executor is not None:
        options["executor"] = executor
    return options


def adopt_policy_files(solver, document: dict, checkpoint_dir) -> None:
    """Let ``solver`` append to the policy files of the checkpoint it was restored from (just verified), when it
    writes its checkpoints into the same directory."""
    source = Path(document["file"]).parent if "file" in document else None
    if checkpoint_dir is not None and source is not None and Path(checkpoint_dir).resolve() == source.resolve():
        _POLICY_FILES[solver] = {str(source.resolve()): [
            {**entry, "sha256": document["manifest"][entry["file"]]} for entry in document["policy_files"]]}


def state_from_document(document: dict, initial, same_eval: bool) -> LoopState:
    """The :class:`psro.loop.state.LoopState` a checkpoint document (from :func:`load_checkpoint`) describes.

    The random generator, the best responses waiting to join and the
    meta-strategies are restored exactly; policy objects are rebuilt from their
    arrays (:func:`member_from_arrays`). ``initial`` is the run's initial state
    (its empty populations say what they hold), or the game's tree (tabular
    populations over its infostates); ``same_eval`` says whether the run's
    evaluation meta-solver is its training one (then they share one solution).
    """
    arrays, state = document["arrays"], document["state"]
    game = document["options"]["game"]
    restored = initial if isinstance(initial, LoopState) else LoopState.initial(initial, seed=0)
    if any(len(pop) for pop in restored.populations):
        raise ValueError("initial must be a run's state before its first step (empty populations).")
    members = document.get("members")
    if isinstance(restored.populations[0], PolicyPopulation):
        if not isinstance(members, dict):
            raise ValueError(f"the checkpoint holds tabular populations, but this run (game {game!r}, a learned "
                             "oracle) holds policy objects")
        n = len(restored.populations)
        for p, pop in enumerate(restored.populations):
            provenance = [Provenance(int(i), str(o), str(m), float(v)) for i, o, m, v in
                          zip(arrays[f"iteration_{p}"], arrays[f"oracle_{p}"], arrays[f"meta_solver_{p}"],
                              arrays[f"value_{p}"])]
            if provenance:
                pop.add(_members(members["populations"][p], arrays, f"member_{p}"), provenance)
        restored.pending = [list(zip(_members(members["pending"][p], arrays, f"pending_{p}"),
                                     (float(v) for v in arrays[f"pending_value_{p}"]))) for p in range(n)]
        return _restore_rest(document, restored, same_eval)
    if members is not None:
        raise ValueError(f"the checkpoint holds policy objects, but this run (game {game!r}) tabular populations")
    for p, pop in enumerate(restored.populations):
        policies = arrays[f"policies_{p}"]
        if policies.shape[1:] != (pop.infostates.num_infostates, pop.infostates.num_actions):
            raise ValueError(f"player {p}'s policies have shape {policies.shape[1:]}; the game "
                             f"{game!r} needs {(pop.infostates.num_infostates, pop.infostates.num_actions)}")
        provenance = [Provenance(int(i), str(o), str(m), float(v)) for i, o, m, v in
                      zip(arrays[f"iteration_{p}"], arrays[f"oracle_{p}"], arrays[f"meta_solver_{p}"],
                          arrays[f"value_{p}"])]
        if len(policies):
            pop.add(policies, provenance)
    n = len(restored.populations)
    if n != len(state["sizes_before"]):
        raise ValueError(f"the game {game!r} has {n} players; the checkpoint {len(state['sizes_before'])}")
    restored.pending = [[(arrays[f"pending_{p}"][k], float(arrays[f"pending_value_{p}"][k]))
                         for k in range(arrays[f"pending_{p}"].shape[0])] for p in range(n)]
    return _restore_rest(document, restored, same_eval)


def _restore_rest(document: dict, restored: LoopState, same_eval: bool) -> LoopState:
    """What :func:`state_from_document` restores after the populations and the waiting responses."""
    arrays, state = document["arrays"], document["state"]
    n = len(restored.populations)
    if n != len(state["sizes_before"]):
        raise ValueError(f"the game {document['options']['game']!r} has {n} players; the checkpoint "
                         f"{len(state['sizes_before'])}")
    restored.meta_game = document["meta_game_object"]
    restored.iteration = int(state["iteration"])
    restored.gap, restored.train_gap = float(state["gap"]), float(state["train_gap"])
    restored.evaluations = int(state["evaluations"])
    restored.in_iteration = bool(state["in_iteration"])
    restored.sizes_before = [int(k) for k in state["sizes_before"]]
    restored.wall, restored.cpu = float(state["wall_time"]), float(state["cpu_time"])
    restored.env_steps, restored.measure_episodes = _counter(state, "env_steps"), _counter(state, "measure_episodes")
    restored.rows = [dict(row) for row in document["history"]]
    restored.extra = type(restored.extra).from_document(document.get("extra", {}))   # (older checkpoints: none)
    restored.rng.bit_generator.state = document["rng"]
    if "top_up" in state:   # a checkpoint written during a Monte Carlo top-up resumes it at its batch
        topped = state["top_up"]
        restored.top_up = TopUpProgress(key=tuple(int(k) for k in topped["key"]), round=int(topped["round"]),
                                        spent=int(topped["spent"]), target=arrays.get("top_up_target"),
                                        strategy=arrays.get("top_up_strategy"))
    if restored.iteration >= 0 and not restored.in_iteration:
        meta_game = restored.meta_game.mean_game()
        for prefix, attr in (("meta", "meta_strategy"), ("eval_meta", "eval_meta_strategy")):
            info = state[attr]
            if info is not None and f"{prefix}_joint" in arrays:
                eq = make_equilibrium(meta_game, concept=info["concept"], method=info["method"],
                                      joint=arrays[f"{prefix}_joint"],
                                      marginals=[arrays[f"{prefix}_marginal_{p}"] for p in range(meta_game.num_players)]
                                      if info["concept"] not in ("ce", "cce") else None,
                                      info={"restored": True})
                setattr(restored, attr, eq)
        if same_eval:
            restored.eval_meta_strategy = restored.meta_strategy
    return restored


def _counter(state: dict, key: str) -> int:
    """A compute counter of the checkpoint's state (0 in a checkpoint written before it was counted)."""
    value = state.get(key, 0)
    if not is_integer(value) or value < 0:
        raise ConfigError("checkpoint", f"state.{key} must be an int >= 0; got {value!r}.")
    return int(value)


def replay_warm_start(meta_solvers, state: LoopState) -> None:
    """Re-solve the recorded sub-games with each stateful (warm-started) meta-solver to rebuild its state, so a
    resumed run makes the same choices as an uninterrupted one."""
    for meta_solver in {id(m): m for m in meta_solvers}.values():
        if meta_solver.warm_lp is None:
            continue
        total, count = state.meta_game.total, state.meta_game.count
        n = state.meta_game.num_players
        for row in state.rows:   # every profile of a recorded row was evaluated
            block = (slice(None), *[slice(0, int(row[f"population_{p}"])) for p in range(n)])
            meta_solver(NormalFormGame(total[block] / count[block]))


#: The names this module re-exported before, each resolved with a DeprecationWarning (CHANGELOG.md)
__getattr__ = moved_names(__name__, {
    "KEY_VARIABLE": "psro.run.document_seal",
    "is_sealed": "psro.run.document_seal",
    "seal_document": "psro.run.document_seal",
})
