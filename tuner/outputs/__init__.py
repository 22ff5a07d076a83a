"""What a finished study writes, from its snapshot: summary.json, OPTIONS.ini and the comparison
(:mod:`.report`), the explanation (:mod:`.explain`), plots (:mod:`.plots`), and export/verify of the
best configuration (:mod:`.export`). Outputs never import the engine."""
