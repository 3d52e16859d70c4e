"""Running PSRO from the command line: the ``psro`` command (:mod:`psro.run.cli`), the run directory
(:mod:`psro.run.run_dir`), checkpoints (:mod:`psro.run.checkpoint`) and the final population ranking
(:mod:`psro.run.population_ranking`)."""
