"""Checkpoints of a PSRO run: written atomically after every iteration, resumed bit for bit.

A checkpoint directory holds

* ``checkpoint.json``: the commit point. The solver's constructor options,
  the run config (when the CLI wrote it), the loop state (iteration, gaps,
  evaluation count, times), the random generator's state
  (``bit_generator.state``) and the history rows; it names the two array
  files of its iteration;
* ``arrays-<iteration>.npz``: every population (policies and provenance), the
  best responses waiting to join, the meta-strategy, and the state of a Monte
  Carlo top-up in progress (its meta-strategy and a round's target counts);
* ``meta_game-<iteration>.npz``: the :class:`games.EmpiricalGame`.

Every file is written to a temporary file in the same directory, flushed to
disk (``fsync``) and renamed over its final name (``os.replace``). The array
files of an iteration are written before the JSON that names them, and older
ones are removed only after it, so a process killed at any moment leaves the
last complete checkpoint readable. No pickle anywhere (``allow_pickle=False``).

:meth:`psro.PSRO.run` writes one after every iteration; a run killed in the
middle of one resumes at the start of that iteration. A checkpoint may also be
written in the middle of the evaluation phase (``PSRO.save_checkpoint`` from
an ``on_evaluation_batch`` hook, e.g. after each Monte Carlo batch): the
resumed run keeps the blocks already evaluated and evaluates only the rest.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from games.empirical import EmpiricalGame
from games.normal_form import NormalFormGame

__all__ = ["CHECKPOINT_FILE", "save_checkpoint", "load_checkpoint", "restore", "has_checkpoint", "atomic_write"]

CHECKPOINT_FILE = "checkpoint.json"
FORMAT_VERSION = 1


def atomic_write(path, write) -> None:
    """Call ``write(fileobj)`` on a temporary file next to ``path``, fsync it and rename it to ``path``.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write(path, lambda fh: fh.write(b"done"))
    >>> path.read_bytes()
    b'done'
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def has_checkpoint(directory) -> bool:
    """Whether ``directory`` holds a checkpoint.

    Examples
    --------
    >>> has_checkpoint("/nonexistent")
    False
    """
    return (Path(directory) / CHECKPOINT_FILE).is_file()


def save_checkpoint(directory, solver, config: dict | None = None) -> Path:
    """Write the checkpoint of ``solver`` (a :class:`psro.PSRO`) into ``directory``; return the JSON's path.

    ``config`` (a plain dict, e.g. ``PSROConfig.to_dict()``) is stored with it;
    when not given, the ``config`` of the previous checkpoint there is kept.

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
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    t = solver.iteration
    if config is None:
        config = getattr(solver, "run_config", None)
    if config is None and has_checkpoint(directory):
        config = load_checkpoint(directory, arrays=False).get("config")
    arrays_name, meta_name = f"arrays-{t:06d}.npz", f"meta_game-{t:06d}.npz"

    arrays = {}
    for p, pop in enumerate(solver.populations):
        table = pop.provenance_table()
        arrays[f"policies_{p}"] = np.asarray(pop.policies)
        arrays[f"iteration_{p}"] = table["iteration"].to_numpy(dtype=np.int64)
        arrays[f"oracle_{p}"] = table["oracle"].to_numpy(dtype=str)
        arrays[f"meta_solver_{p}"] = table["meta_solver"].to_numpy(dtype=str)
        arrays[f"value_{p}"] = table["value"].to_numpy(dtype=np.float64)
        pending = solver.pending_responses[p]
        info = pop.infostates
        arrays[f"pending_{p}"] = (np.stack([pol for pol, _ in pending]) if pending
                                  else np.zeros((0, info.num_infostates, info.num_actions)))
        arrays[f"pending_value_{p}"] = np.array([v for _, v in pending], dtype=np.float64)
    for prefix, eq in (("meta", solver.meta_strategy), ("eval_meta", solver.eval_meta_strategy)):
        if eq is not None:
            arrays[f"{prefix}_joint"] = np.asarray(eq.joint)
            for p, m in enumerate(eq.marginals):
                arrays[f"{prefix}_marginal_{p}"] = np.asarray(m)
    topped = solver.top_up_progress
    if topped.target is not None:
        arrays["top_up_target"] = np.asarray(topped.target, dtype=np.int64)
    if topped.strategy is not None:
        arrays["top_up_strategy"] = np.asarray(topped.strategy, dtype=np.float64)
    atomic_write(directory / arrays_name, lambda fh: np.savez(fh, **arrays))
    solver.meta_game.save(directory / meta_name)   # atomic (temporary file + rename) ...
    fd = os.open(directory / meta_name, os.O_RDONLY)  # ... and now on disk before the JSON names it
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

    def method_of(eq):
        return None if eq is None else {"concept": eq.concept, "method": eq.method}

    document = {
        "version": FORMAT_VERSION,
        "iteration": t,
        "arrays": arrays_name,
        "meta_game": meta_name,
        "options": solver.options,
        "config": config,
        "state": {
            "iteration": t,
            "gap": solver.gap,
            "train_gap": solver.train_gap,
            "evaluations": solver.evaluations,
            "in_iteration": solver.in_iteration,
            "sizes_before": [int(k) for k in solver._sizes_before],
            "wall_time": solver._wall,
            "cpu_time": solver._cpu,
            "meta_strategy": method_of(solver.meta_strategy),
            "eval_meta_strategy": method_of(solver.eval_meta_strategy),
            "top_up": {"key": [int(k) for k in topped.key], "round": topped.round, "spent": topped.spent},
        },
        "rng": solver.rng.bit_generator.state,
        "history": solver._rows,
    }
    text = json.dumps(document, indent=1, default=_json_default).encode()
    atomic_write(directory / CHECKPOINT_FILE, lambda fh: fh.write(text))
    for old in directory.glob("*.npz"):
        if old.name not in (arrays_name, meta_name) and old.name.startswith(("arrays-", "meta_game-")):
            old.unlink(missing_ok=True)
    return directory / CHECKPOINT_FILE


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in a checkpoint")


def load_checkpoint(directory, arrays: bool = True) -> dict:
    """Read a checkpoint: the JSON document, plus ``"arrays"`` (a dict) and ``"meta_game_object"``.

    Raises
    ------
    ValueError
        When ``directory`` holds no checkpoint, or a damaged one.

    Examples
    --------
    >>> load_checkpoint("/nonexistent")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: checkpoint_dir '/nonexistent' holds no checkpoint.json; ...
    """
    directory = Path(directory)
    path = directory / CHECKPOINT_FILE
    if not path.is_file():
        raise ValueError(f"checkpoint_dir {str(directory)!r} holds no {CHECKPOINT_FILE}; was the run started "
                         "with a run directory (psro run ... --out RUN_DIR)?")
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"checkpoint {str(path)!r} is damaged: {exc}") from None
    if document.get("version") != FORMAT_VERSION:
        raise ValueError(f"checkpoint {str(path)!r} has format version {document.get('version')!r}; "
                         f"this version reads {FORMAT_VERSION}.")
    if arrays:
        with np.load(directory / document["arrays"], allow_pickle=False) as data:
            document["arrays"] = {k: data[k] for k in data.files}
        document["meta_game_object"] = EmpiricalGame.load(directory / document["meta_game"])
    return document


def restore(document: dict, checkpoint_dir=None, progress: bool = True, executor=None):
    """A :class:`psro.PSRO` in the state a checkpoint document (from :func:`load_checkpoint`) describes.

    The random generator, the best responses waiting to join and the
    meta-strategy are restored exactly; a warm-started meta-solver (``"nash"``)
    replays its solves over the recorded population sizes, so that the resumed
    run makes the same choices as an uninterrupted one. Learned oracles keep
    no state between calls (each response's seed is derived from the run's
    seed, the iteration, the player and the target), so they need none.

    ``executor``, when given, replaces the checkpoint's executor (results do not depend on it).

    Examples
    --------
    See :meth:`psro.PSRO.resume`.
    """
    from psro.loop import PSRO
    from psro.population import Provenance
    from solvers import make_equilibrium

    options = dict(document["options"])
    if executor is not None:
        options["executor"] = executor
        options["evaluator_options"] = {k: v for k, v in options.get("evaluator_options", {}).items()
                                        if k != "executor"}
    solver = PSRO(**options, progress=progress, checkpoint_dir=checkpoint_dir)
    solver.run_config = document.get("config")
    arrays, state = document["arrays"], document["state"]
    for p, pop in enumerate(solver.populations):
        policies = arrays[f"policies_{p}"]
        provenance = [Provenance(int(i), str(o), str(m), float(v)) for i, o, m, v in
                      zip(arrays[f"iteration_{p}"], arrays[f"oracle_{p}"], arrays[f"meta_solver_{p}"],
                          arrays[f"value_{p}"])]
        if len(policies):
            pop.add(policies, provenance)
    solver._pending = [[(arrays[f"pending_{p}"][k], float(arrays[f"pending_value_{p}"][k]))
                        for k in range(arrays[f"pending_{p}"].shape[0])] for p in range(len(solver.populations))]
    solver.meta_game = document["meta_game_object"]
    solver.iteration = int(state["iteration"])
    solver.gap, solver.train_gap = float(state["gap"]), float(state["train_gap"])
    solver.evaluations = int(state["evaluations"])
    solver.in_iteration = bool(state["in_iteration"])
    solver._sizes_before = [int(k) for k in state["sizes_before"]]
    solver._wall, solver._cpu = float(state["wall_time"]), float(state["cpu_time"])
    solver._rows = [dict(row) for row in document["history"]]
    solver.rng.bit_generator.state = document["rng"]
    if "top_up" in state:   # a checkpoint written during a Monte Carlo top-up resumes it at its batch
        from psro.evaluation import TopUpProgress

        topped = state["top_up"]
        solver._top_up_progress = TopUpProgress(key=tuple(int(k) for k in topped["key"]), round=int(topped["round"]),
                                                spent=int(topped["spent"]), target=arrays.get("top_up_target"),
                                                strategy=arrays.get("top_up_strategy"))
    if solver.iteration >= 0 and not solver.in_iteration:
        game = solver.meta_game.mean_game()
        n = game.num_players
        for prefix, attr in (("meta", "meta_strategy"), ("eval_meta", "eval_meta_strategy")):
            info = state[attr]
            if info is not None and f"{prefix}_joint" in arrays:
                eq = make_equilibrium(game, concept=info["concept"], method=info["method"],
                                      joint=arrays[f"{prefix}_joint"],
                                      marginals=[arrays[f"{prefix}_marginal_{p}"] for p in range(n)]
                                      if info["concept"] not in ("ce", "cce") else None,
                                      info={"restored": True})
                setattr(solver, attr, eq)
        if solver.eval_meta_solver is solver.meta_solver:
            solver.eval_meta_strategy = solver.meta_strategy
    _replay_warm_start(solver)
    return solver


def _replay_warm_start(solver) -> None:
    """Re-solve the recorded sub-games with a stateful (warm-started) meta-solver to rebuild its state."""
    for meta_solver in {id(m): m for m in (solver.meta_solver, solver.eval_meta_solver)}.values():
        if meta_solver.warm_lp is None:
            continue
        total, count = solver.meta_game.total, solver.meta_game.count
        n = solver.meta_game.num_players
        for row in solver._rows:   # every profile of a recorded row was evaluated
            block = (slice(None), *[slice(0, int(row[f"population_{p}"])) for p in range(n)])
            meta_solver(NormalFormGame(total[block] / count[block]))
