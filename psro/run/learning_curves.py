"""Learners you can watch: the learning curves of a run's learned responses, one row per training chunk.

Every learner that trains a network (the PPO and DQN oracles: one row per PPO update, one every ``chunk_steps``
decisions of DQN; NFSP: one row per player and network per iteration) reports its training chunk by chunk
(:class:`psro.oracles.learned.training.Curve`). A training loop turns a step's responses into rows of
:data:`LEARNER_COLUMNS` (:func:`curve_rows`), with ``env_steps`` the run's cumulative environment decisions at the
chunk (the responses of one iteration counted one after the other, in the order the history's ``env_steps`` adds
them up), and hands them to ``solver.on_learner_rows`` (:meth:`psro.loop.training.TrainingLoop.emit_learner_rows`).

``psro run`` and ``psro sweep`` attach a :class:`LearnerLog`: it keeps ``learners.csv`` in the run directory
(rewritten through :func:`psro.run.run_files.write_text` after every step that trained a network; on resume, the
rows of iterations the checkpoint does not hold are dropped, since they are trained again) and feeds the same rows
to the run's loggers (:mod:`psro.run.loggers`, step = ``env_steps``). A learner that diverges stops the run with a
``ValueError``; the rows of its chunks so far are written first. ``psro report`` draws ``learning_curves.png``
(:func:`plot_learning_curves`).

Examples
--------
>>> from psro import PSRO
>>> solver = PSRO("kuhn_poker", oracle="ppo", progress=False, approx_gap_every=None,
...               oracle_options={"total_steps": 1024, "num_envs": 16, "num_steps": 16, "eval_episodes": 50})
>>> rows = []
>>> solver.on_learner_rows = rows.extend
>>> _ = solver.run(iterations=1)
>>> import pandas as pd
>>> table = pd.DataFrame(rows, columns=LEARNER_COLUMNS)
>>> table.groupby(["iteration", "player"]).size().tolist(), table["learner"].iloc[0]   # 4 PPO updates each
([4, 4, 4, 4], 'ppo')
>>> bool(table["env_steps"].is_monotonic_increasing), int(table["env_steps"].iloc[-1]) == solver.state.env_steps
(True, True)
"""

from __future__ import annotations

import io
import logging
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from psro.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEARNER_COLUMNS", "LEARNERS_FILE", "curve_rows", "failed_rows", "LearnerLog", "attach_learner_log",
           "read_learning_curves", "learning_curves_figure", "plot_learning_curves"]

logger = logging.getLogger(__name__)

#: The columns of ``learners.csv``: the iteration and player a response trained for, the run's cumulative
#: environment decisions at the end of the chunk, the chunk's mean loss and policy entropy (NaN where the learner
#: has none), the mean return of the episodes it finished, the response's value against its target (its last row;
#: NaN in the others), the step size; then which of the player's targets (``index``) and the learner's name
LEARNER_COLUMNS = ("iteration", "player", "env_steps", "loss", "entropy", "episode_return", "value", "learning_rate",
                   "index", "learner")
LEARNERS_FILE = "learners.csv"
_VALUES = ("loss", "entropy", "episode_return", "value", "learning_rate")


def _row(iteration: int, player: int, index: int, learner: str, env_steps: int, chunk: dict) -> dict:
    row = {"iteration": int(iteration), "player": int(player), "env_steps": int(env_steps),
           **{key: float(chunk.get(key, math.nan)) for key in _VALUES}, "index": int(index), "learner": str(learner)}
    return row


def curve_rows(iteration: int, responses, env_steps: int) -> list:
    """The rows of :data:`LEARNER_COLUMNS` of one step's ``responses`` (``responses[p][i]``: player ``p``'s
    response to its target ``i``; a response without a learning curve adds none), the run having trained on
    ``env_steps`` decisions before them.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> ppo = SimpleNamespace(env_steps=128, curve=({"steps": 64, "loss": 0.5, "learner": "ppo"},
    ...                                             {"steps": 128, "loss": 0.25, "value": 0.1, "learner": "ppo"}))
    >>> exact = SimpleNamespace(env_steps=0, curve=())
    >>> [(r["player"], r["env_steps"], r["loss"]) for r in curve_rows(3, [[ppo], [exact, ppo]], env_steps=1000)]
    [(0, 1064, 0.5), (0, 1128, 0.25), (1, 1192, 0.5), (1, 1256, 0.25)]
    """
    rows = []
    for p, player_responses in enumerate(responses):
        for i, response in enumerate(player_responses):
            for chunk in getattr(response, "curve", ()):
                rows.append(_row(iteration, p, i, chunk.get("learner", ""), env_steps + int(chunk["steps"]), chunk))
            env_steps += int(getattr(response, "env_steps", 0))
    return rows


def failed_rows(iteration: int, curve, env_steps: int) -> list:
    """The rows of a learner that stopped with a ``ValueError`` (its ``learner_curve``: chunks with ``player``)."""
    return [_row(iteration, chunk.get("player", -1), chunk.get("index", 0), chunk.get("learner", ""),
                 env_steps + int(chunk["steps"]), chunk) for chunk in curve]


class LearnerLog:
    """``learners.csv`` of a run directory, kept as rows arrive (:meth:`add`), and the same rows for the loggers.

    Parameters
    ----------
    run_dir : path
    loggers : psro.run.loggers.LoggerGroup, optional
        Fed every row (``log_learners``).
    through_iteration : int
        The last iteration whose rows are kept from an existing ``learners.csv`` (a resumed run's checkpoint
        holds iterations up to it; later ones are trained again); -1: a new run, none kept.

    Examples
    --------
    >>> import tempfile
    >>> out = tempfile.mkdtemp()
    >>> log = LearnerLog(out)
    >>> log.add([{"iteration": 1, "player": 0, "env_steps": 64, "loss": 0.5, "learner": "ppo"}])
    >>> log.add([{"iteration": 2, "player": 0, "env_steps": 128, "loss": 0.25, "learner": "ppo"}])
    >>> read_learning_curves(out)[["iteration", "env_steps", "loss"]].values.tolist()
    [[1.0, 64.0, 0.5], [2.0, 128.0, 0.25]]
    >>> len(LearnerLog(out, through_iteration=1).rows)   # resumed after iteration 1: iteration 2 is trained again
    1
    """

    def __init__(self, run_dir, loggers=None, through_iteration: int = -1):
        self.path = Path(run_dir) / LEARNERS_FILE
        self.loggers = loggers
        self.rows: list = []
        if os.path.lexists(self.path):
            table = read_learning_curves(run_dir)
            kept = table[table["iteration"] <= through_iteration]
            self.rows = kept.to_dict("records")
            if len(kept) < len(table):
                self._write()

    def add(self, rows) -> None:
        """Append ``rows`` (dicts of :data:`LEARNER_COLUMNS`), rewrite ``learners.csv``, feed the loggers."""
        rows = list(rows)
        if not rows:
            return
        self.rows.extend(rows)
        self._write()
        if self.loggers is not None:
            self.loggers.log_learners(rows)

    def _write(self) -> None:
        from psro.run.run_files import check_target, write_text

        if not self.rows:
            check_target(self.path).unlink(missing_ok=True)   # (never through a link)
            return
        import pandas as pd

        write_text(self.path, pd.DataFrame(self.rows, columns=list(LEARNER_COLUMNS)).to_csv(index=False))


def attach_learner_log(solver, run_dir, loggers=None) -> LearnerLog:
    """A :class:`LearnerLog` for ``solver``'s run directory, fed by the solver (``solver.on_learner_rows``); the
    rows of iterations beyond its history (a resumed run's) are dropped."""
    rows = solver.state.rows
    log = LearnerLog(run_dir, loggers, through_iteration=int(rows[-1]["iteration"]) if rows else -1)
    solver.on_learner_rows = log.add
    return log


def read_learning_curves(run_dir) -> pd.DataFrame:
    """``learners.csv`` of a run directory (through :func:`psro.run.run_files.read_regular`), with the columns of
    :data:`LEARNER_COLUMNS`; an empty table when the run trained no network.

    Examples
    --------
    >>> import tempfile
    >>> read_learning_curves(tempfile.mkdtemp()).columns.tolist() == list(LEARNER_COLUMNS)
    True
    """
    import pandas as pd

    from psro.run.run_files import read_regular

    path = Path(run_dir) / LEARNERS_FILE
    if not os.path.lexists(path):
        return pd.DataFrame(columns=list(LEARNER_COLUMNS))
    table = pd.read_csv(io.BytesIO(read_regular(path)))
    missing = [c for c in LEARNER_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{str(path)!r} has no column(s) {missing}; it is not a learners.csv written by psro "
                         "(remove it, or run again).")
    table["learner"] = table["learner"].fillna("").astype(str)
    return table[list(LEARNER_COLUMNS)]


def _curves(table: pd.DataFrame) -> list:
    """``(learner, player, rows)`` per response: its rows in order; a learner with one row per iteration (NFSP's
    continual networks) is one curve per player and target across iterations."""
    curves = []
    for learner, rows in table.groupby("learner", sort=True):
        keys = ["player", "index", "iteration"]
        if rows.groupby(keys).size().max() <= 1:
            keys = ["player", "index"]
        for key, group in rows.groupby(keys, sort=True):
            curves.append((learner, int(key[0]), group.sort_values("env_steps")))
    return curves


def learning_curves_figure(table: pd.DataFrame, title: str = ""):
    """One figure of a run's learning curves: loss and episode return against ``env_steps``, a thin line per
    response (colour: the player; line style: the learner), readable with many responses; a
    ``matplotlib.figure.Figure`` drawn without pyplot.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame([{"iteration": t, "player": p, "env_steps": 100 * t + 10 * k + 50 * p, "loss": 1 / k,
    ...                        "entropy": 0.5, "episode_return": 0.1 * k, "value": math.nan, "learning_rate": 0.01,
    ...                        "index": 0, "learner": "ppo"} for t in range(1, 4) for p in range(2)
    ...                       for k in range(1, 4)])
    >>> fig = learning_curves_figure(table)
    >>> [ax.get_ylabel() for ax in fig.axes], len(fig.axes[0].lines)
    (['loss', 'mean episode return'], 6)
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    if table.empty:
        raise ConfigError("table", "holds no learner rows (the run trained no network); nothing to draw.")
    fig = Figure(figsize=(11, 4))
    axes = fig.subplots(1, 2)
    curves = _curves(table)
    width = 1.2 if len(curves) <= 10 else 0.6
    styles = {name: style for name, style in zip(sorted(table["learner"].unique()), ("-", "--", ":", "-."))}
    players = sorted(table["player"].unique())
    for learner, player, rows in curves:
        colour = f"C{players.index(player) % 10}"
        for ax, column in zip(axes, ("loss", "episode_return")):
            ax.plot(rows["env_steps"], rows[column], color=colour, linestyle=styles.get(learner, "-"),
                    linewidth=width, alpha=0.7, marker="." if len(rows) == 1 else None)
    for ax, label in zip(axes, ("loss", "mean episode return")):
        ax.set_xlabel("environment steps of the run")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=f"C{i % 10}", label=f"player {p}") for i, p in enumerate(players)]
    handles += [Line2D([], [], color="grey", linestyle=style, label=name)
                for name, style in styles.items() if len(styles) > 1]
    axes[1].legend(handles=handles, loc="best", fontsize="small")
    fig.suptitle(title or f"learning curves: {len(curves)} responses")
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.13, top=0.9, wspace=0.2)   # (fixed: see history_figure)
    return fig


def plot_learning_curves(run_dir, title: str = "") -> Path | None:
    """Draw ``learning_curves.png`` in a run directory from its ``learners.csv`` (through the safe writer); None
    when the run trained no network."""
    from psro.run.run_files import write_bytes

    table = read_learning_curves(run_dir)
    if table.empty:
        return None
    buffer = io.BytesIO()
    learning_curves_figure(table, title).savefig(buffer, format="png", dpi=110)
    return write_bytes(Path(run_dir) / "learning_curves.png", buffer.getvalue())
