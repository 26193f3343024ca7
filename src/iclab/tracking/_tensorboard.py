"""TensorBoard backend: event files in one log folder, written by ``torch.utils.tensorboard.SummaryWriter``.

Parameters become one markdown table under the text tag ``config``; figures are images; markdown and JSON
artifacts are text. TensorBoard has no place for other files (the run folder keeps them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from iclab.tracking._base import Tracker

__all__ = ["TensorBoardTracker"]

_TEXT_SUFFIXES = (".md", ".json", ".txt")


class TensorBoardTracker(Tracker):
    """Event files in ``log_dir`` (required; ``tensorboard --logdir`` on it or a folder above)."""

    name = "tensorboard"

    def __init__(self, run_name: str, *, group: str = "iclab", log_dir: str | Path | None = None):
        from torch.utils.tensorboard import SummaryWriter

        if log_dir is None:
            from iclab.errors import ConfigError

            raise ConfigError("log_dir", None, "a folder for TensorBoard's event files")
        self.log_dir = Path(log_dir)
        self.writer = SummaryWriter(log_dir=str(self.log_dir))
        self.writer.add_text("run", f"{group} / {run_name}")

    def log_params(self, params: Mapping[str, Any]) -> None:
        rows = "\n".join(f"| {k} | {str(v).replace('|', '/')} |" for k, v in params.items())
        self.writer.add_text("config", "| parameter | value |\n|---|---|\n" + rows)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        for key, value in metrics.items():
            self.writer.add_scalar(key, float(value), global_step=int(step))

    def log_image(self, path: Path, key: str) -> None:
        import matplotlib.image

        image = matplotlib.image.imread(str(path))  # (H, W, C) floats in [0, 1]
        self.writer.add_image(key, image[..., :3], dataformats="HWC")

    def log_artifact(self, path: Path, folder: str = "") -> None:
        path = Path(path)
        if path.suffix in _TEXT_SUFFIXES:
            self.writer.add_text(f"{folder}/{path.name}" if folder else path.name, path.read_text())

    def flush(self) -> None:
        self.writer.flush()

    def finish(self, failed: bool = False) -> None:
        self.writer.close()

    def location(self) -> str:
        return f"tensorboard event files in {self.log_dir}"
