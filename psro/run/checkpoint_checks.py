"""The checks of a checkpoint's document and arrays (:func:`psro.run.checkpoint.load_checkpoint` runs them): each
problem is a :class:`Damage` naming the file and what is wrong."""

from __future__ import annotations

import math
import re
from pathlib import Path

from games.executors import spec_from_portable
from games.validation import is_integer

__all__ = ["Damage", "check_document", "check_arrays", "ARRAY_FILE"]

#: The name of a checkpoint's array file: kind, iteration, the first 12 hex digits of its SHA-256
ARRAY_FILE = re.compile(r"^(arrays|meta_game|policies)-(-?\d+)-([0-9a-f]{12})\.npz$")
_STATE_KEYS = ("iteration", "gap", "train_gap", "evaluations", "in_iteration", "sizes_before", "wall_time",
               "cpu_time", "meta_strategy", "eval_meta_strategy", "top_up")
_DOCUMENT_KEYS = ("version", "iteration", "arrays", "meta_game", "policy_files", "options", "config", "state", "rng",
                  "history", "manifest")



class Damage(Exception):
    """What is wrong with one file of a checkpoint (turned into a ``ValueError`` naming it)."""

    def __init__(self, file: Path, what: str, verdict: str = "damaged"):
        super().__init__(what)
        self.file, self.what, self.verdict = file, what, verdict


def _fail(path: Path, what: str):
    raise Damage(path, what)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a, b) -> bool:
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


def check_document(document: dict, path: Path) -> None:
    """Structure and consistency of the JSON document alone (raises :class:`Damage`)."""
    missing = [k for k in _DOCUMENT_KEYS if k not in document]
    if missing:
        _fail(path, f"entries {missing} are missing")
    manifest, state, history = document["manifest"], document["state"], document["history"]
    if not isinstance(manifest, dict) or not all(isinstance(k, str) and ARRAY_FILE.match(k)
                                                 and isinstance(v, str) for k, v in manifest.items()):
        _fail(path, "its manifest must map array file names to SHA-256 digests")
    for key in ("arrays", "meta_game"):
        name = document[key]
        if not isinstance(name, str) or name not in manifest or not name.startswith(key + "-"):
            _fail(path, f"{key!r} must name a file of its manifest; got {name!r}")
    if not isinstance(state, dict) or [k for k in _STATE_KEYS if k not in state]:
        _fail(path, f"'state' must hold {list(_STATE_KEYS)}")
    t = state["iteration"]
    if not is_integer(t) or t < -1 or document["iteration"] != t:
        _fail(path, f"'iteration' ({document['iteration']!r}) and state.iteration ({t!r}) must be the same int >= -1")
    if not isinstance(state["in_iteration"], bool):
        _fail(path, "state.in_iteration must be true or false")
    sizes = state["sizes_before"]
    if not isinstance(sizes, list) or not sizes or not all(is_integer(k) and k >= 0 for k in sizes):
        _fail(path, "state.sizes_before must be a list of population sizes, one per player")
    files, n_players = document["policy_files"], len(sizes)
    ends = [0] * n_players
    if not isinstance(files, list) or not files:
        _fail(path, "'policy_files' must list the files of the populations' policies")
    for entry in files:
        if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and entry["file"] in manifest
                and entry["file"].startswith("policies-")
                and entry.get("start") == ends and isinstance(entry.get("end"), list) and len(entry["end"]) == n_players
                and all(is_integer(e) and e >= s for s, e in zip(ends, entry["end"]))):
            _fail(path, f"'policy_files' must be files of its manifest covering the rows of each of the {n_players} "
                        "players' populations in order")
        ends = entry["end"]
    for key in ("gap", "train_gap", "wall_time", "cpu_time"):
        if not _is_number(state[key]):
            _fail(path, f"state.{key} must be a number; got {state[key]!r}")
    if not is_integer(state["evaluations"]) or state["evaluations"] < 0:
        _fail(path, "state.evaluations must be an int >= 0")
    if not isinstance(history, list) or not all(isinstance(row, dict) for row in history):
        _fail(path, "'history' must be a list of rows")
    if not isinstance(document.get("extra", {}), dict):
        _fail(path, "'extra' (the training loop's own state) must be a mapping")
    expected_rows = max(t, -1) + 1 - int(state["in_iteration"])
    if len(history) != expected_rows:
        _fail(path, f"it holds {len(history)} history rows, but iteration {t} "
                    f"{'(in progress) ' if state['in_iteration'] else ''}needs {expected_rows}")
    n = len(sizes)
    for i, row in enumerate(history):
        if row.get("iteration") != i or not all(is_integer(row.get(f"population_{p}")) for p in range(n)):
            _fail(path, f"history row {i} must have iteration {i} and population_0..population_{n - 1}")
    if history and not state["in_iteration"]:
        last = history[-1]
        for key in ("gap", "train_gap", "evaluations"):
            if not _same(last.get(key), state[key]):
                _fail(path, f"state.{key} ({state[key]!r}) differs from the last history row's ({last.get(key)!r})")
    rng = document["rng"]
    if not isinstance(rng, dict) or not isinstance(rng.get("bit_generator"), str) or "state" not in rng:
        _fail(path, "'rng' must be a bit generator state ({'bit_generator': ..., 'state': ...})")
    options = document["options"]
    if not isinstance(options, dict) or not isinstance(options.get("game"), (str, dict)):   # dict: a NormalFormGame
        _fail(path, "'options' must hold the solver's options, the game among them")
    try:
        spec_from_portable(options.get("executor"), name="options.executor")
    except ValueError as exc:
        raise Damage(path, str(exc), verdict="refused") from None
    evaluator_options = options.get("evaluator_options", {})
    if not isinstance(evaluator_options, dict) or "executor" in evaluator_options:
        raise Damage(path, "options.evaluator_options must be a mapping without an 'executor' (a stored run may "
                            "only choose its engine and a worker count, in options.executor)", verdict="refused")
    if document["config"] is not None and not isinstance(document["config"], dict):
        _fail(path, "'config' must be null or a mapping of config fields")
    for key in ("meta_strategy", "eval_meta_strategy"):
        info = state[key]
        if info is not None and not (isinstance(info, dict) and isinstance(info.get("concept"), str)
                                     and isinstance(info.get("method"), str)):
            _fail(path, f"state.{key} must be null or {{'concept': ..., 'method': ...}}")


def check_arrays(document: dict, path: Path) -> None:
    """The arrays and the meta-game against the document (raises :class:`Damage`)."""
    arrays, meta, state = document["arrays"], document["meta_game_object"], document["state"]
    # the array files matched the manifest, so a disagreement is the document's: it is named, and the array file
    arrays_name = document["arrays_file"]
    n = len(state["sizes_before"])
    sizes = []
    for p in range(n):
        keys = [f"{k}_{p}" for k in ("policies", "iteration", "oracle", "meta_solver", "value", "pending",
                                     "pending_value")]
        absent = [k for k in keys if k not in arrays]
        if absent:
            _fail(path, f"{arrays_name}: arrays {absent} are missing")
        policies, pending = arrays[f"policies_{p}"], arrays[f"pending_{p}"]
        k = policies.shape[0] if policies.ndim == 3 else -1
        provenance = ("iteration", "oracle", "meta_solver", "value")
        if k < 0 or any(arrays[f"{name}_{p}"].shape != (k,) for name in provenance):
            _fail(path, f"{arrays_name}: player {p}'s policies and provenance disagree in length")
        if pending.ndim != 3 or pending.shape[1:] != policies.shape[1:] \
                or arrays[f"pending_value_{p}"].shape != (pending.shape[0],):
            _fail(path, f"{arrays_name}: player {p}'s waiting best responses do not fit its policies")
        sizes.append(k)
    if f"policies_{n}" in arrays:
        _fail(path, f"{arrays_name}: it holds policies of {n + 1} or more players; the document has {n}")
    symmetric = n == 1 and document["options"].get("symmetric") is True   # (one population in every seat)
    players, shape = (meta.num_players, tuple(sizes) * meta.num_players) if symmetric else (n, tuple(sizes))
    if meta.num_players != players or meta.shape != shape or meta.total.shape != meta.count.shape \
            or meta.total_sq.shape != meta.count.shape or meta.exact.shape != meta.shape:
        _fail(path, f"{document['meta_game']}: the meta-game has shape {meta.shape} for {meta.num_players} "
                                                   f"players; the populations have sizes {sizes}")
    history = document["history"]
    if history:
        recorded = [history[-1][f"population_{p}"] for p in range(n)]
        expected = state["sizes_before"] if state["in_iteration"] else sizes
        if recorded != list(expected):
            _fail(path, f"the last history row records populations {recorded}, the arrays hold {sizes}")
    if state["in_iteration"] and any(b > k for b, k in zip(state["sizes_before"], sizes)):
        _fail(path, f"state.sizes_before {state['sizes_before']} exceeds the population sizes {sizes}")
    solved = tuple(state["sizes_before"] if state["in_iteration"] else sizes)   # the last meta-solve's game
    solved = solved * meta.num_players if symmetric else solved
    for prefix in ("meta", "eval_meta"):
        if f"{prefix}_joint" in arrays and arrays[f"{prefix}_joint"].shape != solved:
            _fail(path, f"{arrays_name}: {prefix}_joint has shape {arrays[f'{prefix}_joint'].shape}; the "
                        f"meta-game it solves {solved}")
