"""The checks of a checkpoint's document and arrays (:func:`psro.run.checkpoint.load_checkpoint` runs them): each
problem is a :class:`Damage` naming the file and what is wrong."""

from __future__ import annotations

import math
import re
from pathlib import Path

from games.executors import spec_from_portable
from games.validation import is_integer
from psro.run.checkpoint_schema import PSRODocument, decode

__all__ = ["Damage", "check_document", "check_arrays", "ARRAY_FILE"]

#: The name of a checkpoint's array file: kind, iteration, the first 12 hex digits of its SHA-256
ARRAY_FILE = re.compile(r"^(arrays|meta_game|policies)-(-?\d+)-([0-9a-f]{12})\.npz$")


class Damage(Exception):
    """What is wrong with one file of a checkpoint (turned into a ``ValueError`` naming it)."""

    def __init__(self, file: Path, what: str, verdict: str = "damaged"):
        super().__init__(what)
        self.file, self.what, self.verdict = file, what, verdict


def _fail(path: Path, what: str):
    raise Damage(path, what)


def _same(a, b) -> bool:
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


def check_document(document: dict, path: Path) -> PSRODocument:
    """The document decoded against its schema (:class:`psro.run.checkpoint_schema.PSRODocument`: every field's
    type and bounds), then checked for consistency alone (raises :class:`Damage`)."""
    doc = decode(PSRODocument, document, lambda what: _fail(path, what))
    manifest, state, history = doc.manifest, doc.state, doc.history
    if not all(ARRAY_FILE.match(k) for k in manifest):
        _fail(path, "its manifest must map array file names to SHA-256 digests")
    for key in ("arrays", "meta_game"):
        name = getattr(doc, key)
        if name not in manifest or not name.startswith(key + "-"):
            _fail(path, f"{key!r} must name a file of its manifest; got {name!r}")
    t = state.iteration
    if doc.iteration != t:
        _fail(path, f"'iteration' ({doc.iteration!r}) and state.iteration ({t!r}) must be the same int >= -1")
    n = len(state.sizes_before)
    ends = [0] * n
    for entry in doc.policy_files:
        if not (entry.file in manifest and entry.file.startswith("policies-") and entry.start == ends
                and len(entry.end) == n and all(e >= s for s, e in zip(ends, entry.end))):
            _fail(path, f"'policy_files' must be files of its manifest covering the rows of each of the {n} "
                        "players' populations in order")
        ends = entry.end
    expected_rows = max(t, -1) + 1 - int(state.in_iteration)
    if len(history) != expected_rows:
        _fail(path, f"it holds {len(history)} history rows, but iteration {t} "
                    f"{'(in progress) ' if state.in_iteration else ''}needs {expected_rows}")
    for i, row in enumerate(history):
        if row.get("iteration") != i or not all(is_integer(row.get(f"population_{p}")) for p in range(n)):
            _fail(path, f"history row {i} must have iteration {i} and population_0..population_{n - 1}")
    if history and not state.in_iteration:
        for key in ("gap", "train_gap", "evaluations"):
            if not _same(history[-1].get(key), getattr(state, key)):
                _fail(path, f"state.{key} ({getattr(state, key)!r}) differs from the last history row's "
                            f"({history[-1].get(key)!r})")
    options = document["options"]
    try:
        spec_from_portable(options.get("executor"), name="options.executor")
    except ValueError as exc:
        raise Damage(path, str(exc), verdict="refused") from None
    evaluator_options = options.get("evaluator_options", {})
    if not isinstance(evaluator_options, dict) or "executor" in evaluator_options:
        raise Damage(path, "options.evaluator_options must be a mapping without an 'executor' (a stored run may "
                            "only choose its engine and a worker count, in options.executor)", verdict="refused")
    return doc


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
