from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).parent


def resource_dir(name: str) -> Path:
    """templates/ or hooks/: inside the package when installed from a wheel,
    at the top of the checkout when installed editable."""
    packaged = _PKG / f'_{name}'
    if packaged.is_dir():
        return packaged
    return _PKG.parent / name
