"""A Leduc comparison as a config (its sides, seeds, budget and clock): checked, run side by side, summarised.

Each side is an adapter with its options: the toolkit's loop of a run config, OpenSpiel's psro_v2, OpenSpiel's
NFSP; every side is measured the same way.

A comparison file (YAML, e.g. ``experiments/benchmarks/leduc/side_by_side.yaml``)::

    title: Deep PSRO on Leduc poker against psro_v2 and OpenSpiel's NFSP
    budget: 900            # seconds of training per side and seed
    clock: wall            # or cpu: each side's process-CPU seconds
    seeds: 0-2             # as psro sweep reads them: 0-2, [0, 5], 3
    processes: 2           # (side, seed) processes at a time, each on its own core (null: the sides of a seed)
    sides:
      - {name: ours, options: {config: experiments/configs/leduc_deep_tuned.yaml, executor: serial}}
      - {name: psro_v2, adapter: psro_v2}
      - {name: openspiel_nfsp, adapter: openspiel_nfsp, options: {measure_every: 1000}}

Each side's ``adapter`` (default ``toolkit``) is a module of this package (:data:`ADAPTERS`) with an ``Options``
dataclass (the side's ``options``, checked field by field), a ``run(seed, budget, options, clock, side)`` giving
its rows, and the ``UNIT`` its rows' ``iteration`` counts. ``reference`` (default: the first side) is the side the
others' times to each NashConv target are divided by. Run one with
``python -m experiments.benchmarks.deep_psro_leduc --comparison FILE``.

Each side and seed runs in its own process with one thread (``spawn``); the sides of a seed run at the same time,
each on its own core where there are enough (``concurrent_seeds``: every seed's sides at once, for the CPU clock;
``processes``: the (side, seed) jobs that many at a time, in order).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import logging
import math
import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from experiments.clock import CLOCKS

__all__ = ["ADAPTERS", "Side", "Comparison", "load_comparison", "side_options", "run_comparison", "summarise",
           "value_at", "first_time", "target_lines", "REPORT_TIMES", "STEP_MARKS", "TARGETS"]

logger = logging.getLogger("deep_psro_leduc")

#: The adapters a side can name, each a module of this package.
ADAPTERS = {"toolkit": "experiments.benchmarks.leduc.toolkit_adapter",
            "psro_v2": "experiments.benchmarks.leduc.psro_v2_adapter",
            "openspiel_nfsp": "experiments.benchmarks.leduc.openspiel_nfsp_adapter"}
REPORT_TIMES = (60, 120, 300, 600, 900)
STEP_MARKS = (2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7)
TARGETS = (1.0, 0.5, 0.3)   # the summary's first times at or below these NashConvs (0.5: issue #28's bar)


class _Spec(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class Side(_Spec):
    """One side of a comparison: its name (a word: the log's rows are read back by it), its adapter and the fields
    of the adapter's ``Options`` it changes."""

    name: Annotated[str, Field(pattern=r"^\w+$")]
    adapter: Literal["toolkit", "psro_v2", "openspiel_nfsp"] = "toolkit"
    options: dict[str, Any] = Field(default_factory=dict)


class Comparison(_Spec):
    """A whole comparison (see the module)."""

    sides: Annotated[list[Side], Field(min_length=1)]
    title: str = "Learned paths on Leduc poker"
    budget: Annotated[float, Field(gt=0)] = 900.0
    clock: Literal[CLOCKS] = "wall"
    seeds: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)] = [0, 1, 2]
    processes: Optional[Annotated[int, Field(ge=1)]] = None
    concurrent_seeds: bool = False
    reference: Optional[str] = None

    @field_validator("seeds", mode="before")
    @classmethod
    def _seeds(cls, value):
        from psro.run.sweep import parse_seeds

        return parse_seeds(value)

    @model_validator(mode="after")
    def _names(self):
        names = [side.name for side in self.sides]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"sides: each name once; {twice} given twice")
        if self.reference is not None and self.reference not in names:
            raise ValueError(f"reference: {self.reference!r} is not a side ({names})")
        return self

    @property
    def reference_side(self) -> str:
        return self.reference or self.sides[0].name


def load_comparison(path) -> Comparison:
    """The comparison in the YAML file ``path``, checked: a key given twice, an unknown or wrong field (its path
    named, e.g. ``sides.1.adapter``) and a side's unknown option are each a ``ValueError`` naming the file.

    Examples
    --------
    >>> comparison = load_comparison(Path(__file__).parent / "side_by_side.yaml")
    >>> [side.name for side in comparison.sides], comparison.seeds, comparison.reference_side
    (['ours', 'psro_v2', 'openspiel_nfsp'], [0, 1, 2], 'ours')
    """
    import yaml

    from psro.config.fields import DuplicateKey, UniqueKeyLoader
    from psro.run.checkpoint_schema import decode

    def fail(what):
        raise ValueError(f"comparison {str(path)!r}: {what}.")

    try:
        document = yaml.load(Path(path).read_text(), Loader=UniqueKeyLoader)
    except (DuplicateKey, yaml.YAMLError) as exc:
        fail(" ".join(str(exc).split()))
    comparison = decode(Comparison, document, fail)
    for index, side in enumerate(comparison.sides):
        try:
            side_options(side)
        except ValueError as exc:
            fail(f"sides.{index} ({side.name}): {exc}")
    return comparison


def adapter(name: str):
    """The adapter module called ``name`` (:data:`ADAPTERS`)."""
    return importlib.import_module(ADAPTERS[name])


def side_options(side: Side):
    """The side's options as its adapter's ``Options``: the defaults with ``side.options`` applied, each checked
    against its field's type; an unknown field is an error naming the closest one.

    Examples
    --------
    >>> side_options(Side(name="nfsp", adapter="openspiel_nfsp", options={"measure_every": 500})).measure_every
    500
    >>> side_options(Side(name="v2", adapter="psro_v2", options={"episode": 10}))
    Traceback (most recent call last):
    ...
    ValueError: unknown option 'episode' of the psro_v2 adapter; did you mean 'episodes'?
    """
    import pydantic

    options_class = adapter(side.adapter).Options
    known = [f.name for f in dataclasses.fields(options_class)]
    for key in side.options:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            raise ValueError(f"unknown option {key!r} of the {side.adapter} adapter; "
                             + (f"did you mean {close[0]!r}?" if close else f"known: {known}"))
    try:
        return pydantic.TypeAdapter(options_class).validate_python(dict(side.options))
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        raise ValueError(f"option {'.'.join(map(str, error['loc']))}: {error['msg']} "
                         f"(got {error.get('input')!r})") from None


# ---------------------------------------------------------------- running

def _side_job(side: Side, seed: int, budget: float, core: int | None, clock: str) -> list:
    """One side and seed in its own process: one thread, on ``core`` when given."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    import torch

    torch.set_num_threads(1)
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    return adapter(side.adapter).run(seed, budget, side_options(side), clock, side.name)


def run_comparison(comparison: Comparison) -> list:
    """Every side and seed of ``comparison`` (see the module for what runs at the same time); all rows, in the
    order of the jobs."""
    jobs = [[(side, seed) for side in comparison.sides] for seed in comparison.seeds]
    if comparison.concurrent_seeds or comparison.processes:
        every = [job for batch in jobs for job in batch]
        size = comparison.processes or len(every)
        jobs = [every[i:i + size] for i in range(0, len(every), size)]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    rows = []
    with ProcessPoolExecutor(max_workers=len(jobs[0]), mp_context=get_context("spawn")) as pool:
        for batch in jobs:
            pinned = len(batch) > 1 and len(cores) >= len(batch)
            futures = [pool.submit(_side_job, side, seed, comparison.budget, cores[i] if pinned else None,
                                   comparison.clock) for i, (side, seed) in enumerate(batch)]
            for future in futures:
                rows.extend(future.result())
    return rows


# ---------------------------------------------------------------- the summary

def value_at(curve, t: float, key: str = "wall_s") -> float:
    """NashConv of the last iteration finished by wall time ``t`` (NaN before the first).

    Examples
    --------
    >>> curve = [{"wall_s": 5.0, "nash_conv": 4.0}, {"wall_s": 70.0, "nash_conv": 2.0}]
    >>> value_at(curve, 60), value_at(curve, 900), value_at(curve, 1)
    (4.0, 2.0, nan)
    """
    done = [r["nash_conv"] for r in curve if r[key] <= t]
    return done[-1] if done else math.nan


def first_time(curve, target: float, key: str = "wall_s") -> float:
    """Wall seconds of the first reported NashConv ``<= target`` (inf if never).

    Examples
    --------
    >>> curve = [{"wall_s": 5.0, "nash_conv": 4.0}, {"wall_s": 70.0, "nash_conv": 0.9}]
    >>> first_time(curve, 1.0), first_time(curve, 0.5)
    (70.0, inf)
    """
    return next((r[key] for r in curve if r["nash_conv"] <= target), math.inf)


def target_lines(curves: dict, sides: list, seeds: list, key: str = "wall_s", reference: str = "ours") -> list:
    """The summary's two tables over :data:`TARGETS`: each side's first time at or below the target (median over
    ``seeds``, a seed that never gets there counting as infinite; per seed in brackets when there are several,
    ``-`` where it never does), and the ratio of that median to the ``reference`` side's: "not reached" where the
    side's median is infinite, ``nan`` where the reference's is or the reference did not run.

    Examples
    --------
    >>> curves = {("ours", 0): [{"wall_s": 10.0, "nash_conv": 0.9}, {"wall_s": 40.0, "nash_conv": 0.4}],
    ...           ("psro_v2", 0): [{"wall_s": 30.0, "nash_conv": 0.8}, {"wall_s": 90.0, "nash_conv": 0.2}]}
    >>> print("\\n".join(target_lines(curves, ["ours", "psro_v2"], [0])[-5:]))
    | NashConv <= | ours | psro_v2 |
    |---|---|---|
    | 1 | 1.00 | 3.00 |
    | 0.5 | 1.00 | 2.25 |
    | 0.3 | not reached | nan |
    """
    first = {(s, target): [first_time(curves[s, k], target, key) for k in seeds] for s in sides for target in TARGETS}
    median = {pair: float(np.median(times)) for pair, times in first.items()}

    def seconds(t, never="not reached"):
        return never if math.isinf(t) else f"{t:.1f}"

    def ratio(s, target):
        mine, base = median[s, target], median.get((reference, target), math.inf)
        return "not reached" if math.isinf(mine) else "nan" if math.isinf(base) else f"{mine / base:.2f}"

    head = ["| NashConv <= | " + " | ".join(sides) + " |", "|---" * (len(sides) + 1) + "|"]
    lines = ["", f"First {key[:-2]} seconds at or below each NashConv (median over seeds, a seed that never gets "
             "there counting as infinite" + ("; per seed in brackets, - where it never does" if len(seeds) > 1 else "")
             + "):", "", *head]
    lines += [f"| {target:g} | " + " | ".join(seconds(median[s, target]) + (
        f" [{', '.join(seconds(t, '-') for t in first[s, target])}]" if len(seeds) > 1 else "") for s in sides) + " |"
        for target in TARGETS]
    lines += ["", f"Each side's median time to the target over {reference}'s (not reached: the side's median never "
              f"gets there; nan: {reference}'s does not, or {reference} did not run):", "", *head]
    lines += [f"| {target:g} | " + " | ".join(ratio(s, target) for s in sides) + " |" for target in TARGETS]
    return lines


def summarise(rows: list, comparison: Comparison, command: str) -> str:
    """The markdown summary: medians over seeds at the report times (and environment steps), each side's last
    row, and the first times at or below :data:`TARGETS` with their ratios to the reference side's
    (:func:`target_lines`)."""
    sides = [s.name for s in comparison.sides if any(r["side"] == s.name for r in rows)]
    units = {s.name: adapter(s.adapter).UNIT for s in comparison.sides}
    seeds = sorted({r["seed"] for r in rows})
    curves = {(s, k): [r for r in rows if r["side"] == s and r["seed"] == k] for s in sides for k in seeds}
    budget, clock, reference = comparison.budget, comparison.clock, comparison.reference_side
    times = [t for t in REPORT_TIMES if t < budget] + [budget]
    key = f"{clock}_s"
    medians = {s: [float(np.median([value_at(curves[s, k], t, key) for k in seeds])) for t in times] for s in sides}
    together = (f"{sides[0]} alone" if len(sides) == 1 else "the sides ran at the same time, each in its own "
                "process" + (", one core each" if len(sides) == 2 else ""))
    lines = [f"# {comparison.title}", "", f"Command: `{command}`", "",
             f"Exact NashConv of each side's output (PSRO: its meta-strategy) against {clock} time (measuring "
             f"excluded), median over {len(seeds)} seed(s) {seeds}; {together}.", "",
             f"| {clock} s | " + " | ".join(sides) + " |", "|---" * (len(sides) + 1) + "|"]
    lines += [f"| {t:g} | " + " | ".join(f"{medians[s][i]:.4g}" for s in sides) + " |" for i, t in enumerate(times)]
    stepped = [s for s in sides if all(not math.isnan(r["env_steps"]) for k in seeds for r in curves[s, k])]
    at_steps = {n: [float(np.median([value_at(curves[s, k], n, "env_steps") if curves[s, k][-1]["env_steps"] >= n
                                     else math.nan for k in seeds])) for s in stepped] for n in STEP_MARKS}
    marks = [n for n in STEP_MARKS if not all(math.isnan(v) for v in at_steps[n])]
    if marks:
        lines += ["", "Against environment steps (psro_v2 does not count them; blank: a seed's run ended before):",
                  "", "| env steps | " + " | ".join(stepped) + " |", "|---" * (len(stepped) + 1) + "|"]
        lines += [f"| {n:.0e} | " + " | ".join("" if math.isnan(v) else f"{v:.4g}" for v in at_steps[n]) + " |"
                  for n in marks]
    lines += target_lines(curves, sides, seeds, key, reference)
    lines.append("")
    for s in sides:
        last = [curves[s, k][-1] for k in seeds]
        lines.append(f"- {s}: {units[s]} per seed {[r['iteration'] for r in last]}, final NashConv per seed "
                     f"{[round(r['nash_conv'], 4) for r in last]}, training wall s {[round(r['wall_s']) for r in last]}"
                     f", CPU s {[round(r['cpu_s']) for r in last]}")
    for s in sides:
        if s != reference and reference in sides:
            below = all(o < v for o, v in zip(medians[reference], medians[s]))
            lines.append(f"- {reference} below {s} at every reported time: {'yes' if below else 'no'}")
    return "\n".join(lines) + "\n"
