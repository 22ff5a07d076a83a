"""Reading declarative TOML/YAML files, and finding a preset by name or a file by path."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def load_data_file(path: Path, what: str, error: type[ValueError]) -> Any:
    """Read a TOML or YAML file into plain data, raising ``error`` with one clear line for a bad file."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text()
    except OSError as exc:
        raise error(f"{what} file {path}: {exc.strerror}") from None
    try:
        if suffix == ".toml":
            import tomllib

            return tomllib.loads(text)
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError, yaml.YAMLError
        detail = " ".join(str(exc).split())  # YAML's messages span lines; an error is one line
        raise error(f"{what} file {path}: not valid {suffix[1:].upper()}: {detail}") from None
    raise error(f"{what} file {path}: expected a .toml, .yaml or .yml file")


def preset_names(preset_dir: Path) -> list[str]:
    return sorted(p.stem for p in preset_dir.glob("*.toml"))


def preset_or_file(name_or_path: str | Path, preset_dir: Path, what: str, error: type[ValueError]) -> Path:
    """The preset called ``name_or_path`` in ``preset_dir``, else an existing file at that path."""
    path = Path(name_or_path)
    if not path.suffix and str(name_or_path) in preset_names(preset_dir):
        return preset_dir / f"{name_or_path}.toml"
    if not path.exists():
        raise error(
            f"unknown {what} {str(name_or_path)!r}: not a preset ({', '.join(preset_names(preset_dir))}) nor a file"
        )
    return path
