"""rocksdb-tuner: Bayesian tuning of RocksDB options measured by real db_bench runs.

    from tuner import tune
    result = tune(workload="fillrandom", space="default", trials=20, sampler="tpe", seed=1)
    print(result.best_params, result.best_metrics["ops_per_sec"])
"""

from tuner.api import Study, tune
from tuner.model import (
    ExecutionConfig,
    MeasurementConfig,
    RevalidationConfig,
    SearchConfig,
    TargetConfig,
    TrackingConfig,
    TuneConfig,
    TuneResult,
    UsageError,
)
from tuner.outputs import apply

__all__ = ["TargetConfig", "ExecutionConfig", "MeasurementConfig", "RevalidationConfig", "SearchConfig", "Study",
           "TrackingConfig", "TuneConfig", "TuneResult", "UsageError", "apply", "tune"]
