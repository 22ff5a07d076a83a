"""Experiments: a source study (S0-S4) reproduced on this machine beside the tuner (:mod:`._run`),
and its report (:mod:`._writeup`)."""

from tuner.experiment._run import RESULTS, Experiment, ExperimentError, ExperimentRun, load, machine_info, names
from tuner.experiment._writeup import write_overview, write_report

__all__ = ["RESULTS", "Experiment", "ExperimentError", "ExperimentRun", "load", "machine_info",
           "names", "write_overview", "write_report"]
