"""What a run directory's checkpoint says the run is: its training loop and its config, from the checkpoint alone.

On resume the checkpoint is the single source of truth, for every training loop (PSRO and the self-play family,
NFSP, offline PSRO): :func:`read_saved_run` finds which loop wrote ``RUN_DIR/checkpoint`` from the checkpoint's
own files (``offline_checkpoint.json``; ``checkpoint.json`` of NFSP's format or of PSRO's), verifies it and
reads the run's config from it, so a run directory without ``config.yaml`` resumes. :func:`config_disagreement`
compares ``config.yaml`` with that config and logs a warning naming every field where they differ; the resumed run
follows the checkpoint, and the CLI then rewrites ``config.yaml`` from it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from psro.config.model import PSROConfig
from psro.errors import ConfigError

__all__ = ["SavedRun", "read_saved_run", "config_disagreement"]

logger = logging.getLogger(__name__)

#: The resumable fields (``psro.run.cli.RESUMABLE_CHANGES``) the solver itself holds: :meth:`SavedRun.restore`
#: builds the resumed solver with the new values; the others are the command's (stopping rules, output, engine)
SOLVER_CHANGES = ("approx_gap_every", "approx_gap_options")


@dataclass(frozen=True)
class SavedRun:
    """A verified checkpoint of a run directory.

    Attributes
    ----------
    training_loop : type
        The class that wrote it (``PSRO`` or a subclass, ``NFSP``, ``COffeEPSRO``, ``OfflinePSRO``).
    config : PSROConfig
        The run's config, as the checkpoint stores it.
    document : dict or None
        The verified checkpoint document (PSRO family and NFSP; None for offline PSRO, whose class re-reads it).
    checkpoint_dir : Path
    """

    training_loop: type
    config: PSROConfig
    document: dict | None
    checkpoint_dir: Path

    def restore(self, config: PSROConfig, previous: bool = False):
        """The solver, ready to continue; ``config`` (the saved one with the changes a resume may make) gives the
        executor, whether checkpoints are written and the fields of :data:`SOLVER_CHANGES`, which the resumed run
        uses. A change this kind of loop cannot make raises ``ValueError`` naming the field."""
        from psro.loop.psro_loop import PSRO

        executor = config.executor_spec()
        changes = {name: copy.deepcopy(getattr(config, name)) for name in SOLVER_CHANGES
                   if getattr(config, name) != getattr(self.config, name)}
        checkpoint_dir = self.checkpoint_dir if config.checkpoint else None
        if issubclass(self.training_loop, PSRO):
            document = {**self.document, "options": {**self.document["options"], **changes}}
            return PSRO.restore(document, checkpoint_dir=checkpoint_dir, progress=False, executor=executor)
        if self.document is not None:   # NFSP: its options hold its whole config
            options = self.document["options"]
            document = {**self.document, "options": {**options, "config": {**options["config"], **changes}}}
            return self.training_loop.restore(document, checkpoint_dir=checkpoint_dir, progress=False,
                                              executor=executor)
        if changes:
            name = next(iter(changes))
            raise ConfigError(name, f"{self.training_loop.__name__} measures no approx_gap, so {name} cannot "
                              "change when resuming it; drop the override.")
        solver = self.training_loop.resume(self.checkpoint_dir, progress=False, previous=previous)
        solver.checkpoint_dir = checkpoint_dir
        return solver


def _config_of(data, source: str) -> PSROConfig:
    if not isinstance(data, dict):
        raise ValueError(f"{source} holds no run config; resume it from Python with its class's resume().")
    try:
        return PSROConfig.from_dict(data)
    except (ValueError, TypeError) as exc:
        exc.add_note(f"in the run config of {source}")
        raise


def read_saved_run(run_dir, previous: bool = False) -> SavedRun:
    """The checkpoint in ``RUN_DIR/checkpoint``, verified, with its training loop and config.

    ``previous`` reads the checkpoint before the latest. A directory without a checkpoint, a damaged one, or a
    document without a run config raise ``ValueError`` naming the file.

    Examples
    --------
    >>> import tempfile
    >>> from psro import PSRO
    >>> run = Path(tempfile.mkdtemp())
    >>> solver = PSRO("kuhn_poker", progress=False, checkpoint_dir=run / "checkpoint")
    >>> solver.run_config = solver.config.to_dict()
    >>> _ = solver.run(iterations=1)
    >>> saved = read_saved_run(run)   # (no config.yaml: the checkpoint is enough)
    >>> saved.training_loop.__name__, saved.config.game, saved.document["iteration"]
    ('PSRO', 'kuhn_poker', 1)
    """
    from psro.family.simultaneous import FORMAT as SIMULTANEOUS_FORMAT
    from psro.loop.algorithms import algorithm_class
    from psro.loop.psro_loop import PSRO
    from psro.run.checkpoint import CHECKPOINT_FILE, has_checkpoint, load_checkpoint, previous_name, read_or_advise
    from psro.run.run_files import read_regular

    run_dir = Path(run_dir)
    directory = run_dir / "checkpoint"
    if not directory.is_dir():
        raise ValueError(f"run_dir {str(run_dir)!r} holds no checkpoint folder; start it with "
                         "`psro run CONFIG --out RUN_DIR`.")
    offline = directory / "offline_checkpoint.json"
    if offline.is_file() or (directory / previous_name(offline.name)).is_file():
        from psro.offline.coffee_psro import COffeEPSRO, OfflinePSRO, config_from_options

        # the loop's name, from the latest document or, when that one is unreadable, the previous one (whose
        # reader then says the latest is damaged and the previous one intact)
        names = [previous_name(offline.name)] if previous else [offline.name, previous_name(offline.name)]
        failures = []
        for name in names:
            path = directory / name
            try:
                algorithm = json.loads(read_regular(path))["options"]["algorithm"]
                break
            except (OSError, ValueError, KeyError, TypeError) as exc:
                failures.append(f"{path}: not a readable offline PSRO checkpoint (no options.algorithm: "
                                f"{type(exc).__name__} {exc}).")
        else:
            raise ValueError(failures[0])
        classes = {cls.algorithm: cls for cls in (OfflinePSRO, COffeEPSRO)}
        if algorithm not in classes:
            raise ValueError(f"{path}: options.algorithm is {algorithm!r}; an offline checkpoint's is one of "
                             f"{sorted(classes)}.")
        loop = classes[algorithm]
        document = read_or_advise(lambda prev: loop._read_checkpoint(directory, prev), previous,
                                  f"{loop.__name__}.resume({str(directory)!r}, previous=True)")   # (verified)
        config = document.get("config") or config_from_options(document["options"], document["dataset"]["path"])
        return SavedRun(loop, _config_of(config, str(path)), None, directory)
    if not has_checkpoint(directory):
        raise ValueError(f"run_dir {str(run_dir)!r} holds no checkpoint ({CHECKPOINT_FILE} in checkpoint/); "
                         "start it with `psro run CONFIG --out RUN_DIR`.")
    path = directory / (previous_name(CHECKPOINT_FILE) if previous else CHECKPOINT_FILE)
    kind = None   # (the simultaneous loops' documents say their format; the loaders below say what is wrong with a
    #              damaged one)
    for name in [path.name] if previous else [CHECKPOINT_FILE, previous_name(CHECKPOINT_FILE)]:
        try:
            kind = json.loads(read_regular(directory / name)).get("format")
            break
        except (OSError, ValueError, AttributeError):
            continue
    if kind == SIMULTANEOUS_FORMAT:
        from psro.family.simultaneous import SimultaneousLoop

        document = SimultaneousLoop.load_checkpoint(directory, previous=previous)
        config = document.get("config") or document["options"]["config"]
        return SavedRun(SimultaneousLoop.writer_of(document), _config_of(config, str(path)), document, directory)
    document = load_checkpoint(directory, previous=previous)
    config = _config_of(document.get("config"), f"the checkpoint in {str(run_dir)!r}")
    loop = algorithm_class(config.algorithm, config.oracle)
    if not issubclass(loop, PSRO):
        raise ValueError(f"{path}: its config says algorithm {config.algorithm!r}, whose runs keep their own kind of "
                         "checkpoint, not this PSRO checkpoint; the document was edited or mixed up.")
    return SavedRun(loop, config, document, directory)


def config_disagreement(run_dir, config: PSROConfig) -> list:
    """The fields where ``RUN_DIR/config.yaml`` differs from the checkpoint's ``config``, logged as a warning
    (empty when it agrees or is absent; an unreadable file is reported too). The resumed run follows the checkpoint.

    Examples
    --------
    >>> import tempfile
    >>> run = Path(tempfile.mkdtemp())
    >>> _ = (run / "config.yaml").write_text("name: x\\ngame: kuhn_poker\\nseed: 7\\n")
    >>> config_disagreement(run, PSROConfig(name="x", game="kuhn_poker", seed=0))
    ['seed']
    """
    from psro.run.run_files import check_target

    path = Path(run_dir) / "config.yaml"
    if not os.path.lexists(path):
        return []
    try:
        written = PSROConfig.from_yaml(check_target(path))
    except (OSError, ValueError, TypeError) as exc:
        logger.warning("%s cannot be read (%s); the run follows its checkpoint, and config.yaml is rewritten from "
                       "it.", path, exc)
        return ["config.yaml"]
    changed = [f.name for f in dataclasses.fields(PSROConfig) if getattr(written, f.name) != getattr(config, f.name)]
    if changed:
        logger.warning("%s disagrees with the checkpoint on %s (%s); the run follows the checkpoint, and "
                       "config.yaml is rewritten from it.", path, ", ".join(changed),
                       "; ".join(f"{name}: config.yaml {getattr(written, name)!r}, checkpoint "
                                 f"{getattr(config, name)!r}" for name in changed))
    return changed
