"""The study engine: a request checked and prepared (:mod:`.prepare`), its storage (:mod:`.storage`),
the one trial loop (:mod:`.engine`), re-validation, warm starts and the study lock."""

from tuner.engine.engine import Engine
from tuner.engine.prepare import Prepared, check_values, pruner_of, prepare, score_of

__all__ = ["Engine", "Prepared", "check_values", "prepare", "pruner_of", "score_of"]
