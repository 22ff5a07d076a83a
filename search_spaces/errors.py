"""The error raised for an invalid search space or parameter value."""


class SpaceError(ValueError):
    """A space file, parameter or constraint is invalid; the message names the field."""
