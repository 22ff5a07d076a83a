"""Experiments: a source study (S0-S4) reproduced on this machine beside the tuner (:mod:`.run`),
and its report (:mod:`.writeup`)."""

from tuner.experiment.run import (RESULTS, Experiment, ExperimentError, ExperimentRun, load,
                                  machine_info, names)

__all__ = ["RESULTS", "Experiment", "ExperimentError", "ExperimentRun", "load", "machine_info",
           "names"]
