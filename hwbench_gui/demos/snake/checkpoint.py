"""Save and load snake agents as plain tensor dicts (``torch.load(weights_only=True)``, no pickled objects).

A checkpoint holds the online network's ``state_dict``, the board size, the model and training
configuration, training statistics and a format version. Anything wrong with a file (missing,
truncated, another kind of file, a newer format, weights of another shape) raises
:class:`CheckpointError` naming the path and the reason.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hwbench_gui.demos.snake.game import MAX_SIDE, MIN_SIDE

FORMAT = "hwbench-snake"
FORMAT_VERSION = 1
SHIPPED_NAME = "snake_12x12.pt"
#: A bigger file is not a snake checkpoint (the shipped one is under 1 MB; the largest model a few MB).
MAX_FILE_BYTES = 256 << 20


class CheckpointError(Exception):
    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


@dataclass
class LoadedAgent:
    agent: object  # a DQNAgent, on the requested device
    height: int
    width: int
    stats: dict
    train_config: dict
    path: str


def shipped_checkpoint() -> Path:
    """The trained agent that ships with hwbench (``resources/snake/``)."""
    from hwbench_gui.engine.paths import resources_dir

    return resources_dir() / "snake" / SHIPPED_NAME


def _plain(value):
    """Numbers, strings, lists and dicts only: what ``weights_only`` loading accepts without surprises."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    # Exact builtin types: numpy's float64 subclasses float but would be pickled as a numpy object.
    for kind in (bool, int, float, str):
        if isinstance(value, kind):
            return kind(value)
    if value is None:
        return None
    if hasattr(value, "item"):  # numpy / torch scalars
        return _plain(value.item())
    return str(value)


def save_checkpoint(path: str | os.PathLike, agent, *, height: int, width: int, train_config: dict | None = None,
                    stats: dict | None = None) -> Path:
    """Write ``agent``'s network atomically (temp file + rename); returns the path."""
    import torch

    path = Path(path)
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "board": {"height": int(height), "width": int(width)},
        "model_config": _plain(agent.cfg.model.to_dict()),
        "agent_config": _plain({k: v for k, v in vars(agent.cfg).items() if k != "model"}),
        "train_config": _plain(train_config or {}),
        "stats": _plain(stats or {}),
        "state_dict": {k: v.detach().to("cpu").clone() for k, v in agent.online.state_dict().items()},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(payload, f)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a model is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_checkpoint(path: str | os.PathLike) -> dict:
    """The checked payload dict (tensors on CPU); raises :class:`CheckpointError`.

    Read as every foreign file is (a regular file of at most :data:`MAX_FILE_BYTES`, a bounded read),
    and its board checked before anything is sized by it."""
    import io

    import torch

    from hwbench_gui.engine.foreign import ForeignFileError, read_regular

    path = Path(path)
    try:
        data = read_regular(path, MAX_FILE_BYTES, "a snake checkpoint")
    except ForeignFileError as exc:
        raise CheckpointError(path, exc.reason) from None
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, not a torch file, or a pickle of arbitrary objects
        raise CheckpointError(path, f"not a readable torch checkpoint ({type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(path, f"not a hwbench snake checkpoint (no format {FORMAT!r} marker)")
    version = payload.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(path, f"format version {version!r}; this hwbench reads up to {FORMAT_VERSION}")
    for key in ("board", "model_config", "state_dict"):
        if not isinstance(payload.get(key), dict):
            raise CheckpointError(path, f"missing {key!r}")
    board = payload["board"]
    sides = [board.get("height"), board.get("width")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and MIN_SIDE <= v <= MAX_SIDE for v in sides):
        shown = "×".join(repr(v)[:20] for v in sides)
        raise CheckpointError(path, f"its board {shown} is not {MIN_SIDE} to {MAX_SIDE} cells a side")
    return payload


def load_checkpoint(path: str | os.PathLike, device: str = "cpu") -> LoadedAgent:
    """Rebuild the agent a checkpoint describes, on ``device``; raises :class:`CheckpointError`."""
    from hwbench_gui.demos.snake.agent import AgentConfig, DQNAgent, ModelConfig
    from hwbench_gui.demos.snake.train import resolve_device

    payload = read_checkpoint(path)
    device = resolve_device(device)
    try:
        model = ModelConfig.from_dict(payload["model_config"])
        agent_kwargs = {k: v for k, v in payload.get("agent_config", {}).items()
                        if k in AgentConfig.__dataclass_fields__ and k != "model"}
        agent = DQNAgent(AgentConfig(model=model, **agent_kwargs), device=device)
        agent.online.load_state_dict(payload["state_dict"])
        agent.target.load_state_dict(payload["state_dict"])
        board = payload["board"]
        height, width = int(board["height"]), int(board["width"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(path, f"weights do not fit the stored model ({type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0]})") from exc
    agent.online.eval()
    return LoadedAgent(agent=agent, height=height, width=width, stats=payload.get("stats", {}),
                       train_config=payload.get("train_config", {}), path=str(path))
