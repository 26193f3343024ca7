"""``import iclab.hf`` stays light: transformers (and pandas) load only when a function needs them, so the type
hints that name ``PreTrainedModel``, ``PreTrainedTokenizerBase`` or ``pd.DataFrame`` live under ``TYPE_CHECKING``."""

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def test_import_iclab_hf_loads_no_transformers():
    code = (
        "import sys, iclab.hf, iclab.cli._hf; "
        "print(sorted({'transformers', 'pandas', 'matplotlib'} & set(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"import iclab.hf loaded {done.stdout.strip()}"
