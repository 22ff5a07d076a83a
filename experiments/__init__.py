"""Research: one folder per question, each with its script(s), its results/ and a README.md note.

A package so that its scripts import each other as ``experiments.<folder>.<script>`` (run them from the
repository's root with ``python -m``), and so that no other ``experiments`` directory on the path
merges into it.
"""
