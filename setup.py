"""Everything about the package is in pyproject.toml; this file only adds ``iclab_lm_eval.pth`` to the wheel's root.

That one-line file imports ``_iclab_lm_eval_hook`` when Python starts, so lm-eval's own ``lm_eval --model iclab-hf``
finds iclab's model (lm-eval 0.4.13 has no plugin entry points). setuptools copies only modules and package data,
never a file into ``site-packages`` itself, hence this ``build_py``. An editable install (``pip install -e``) does
not take it: ``make install`` copies the file into the environment itself.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "iclab_lm_eval.pth"


class BuildPyWithPth(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            shutil.copy(Path(__file__).parent / "src" / PTH, Path(self.build_lib) / PTH)

    def get_outputs(self, include_bytecode=True):
        extra = [] if self.editable_mode else [str(Path(self.build_lib) / PTH)]
        return [*super().get_outputs(include_bytecode), *extra]


setup(cmdclass={"build_py": BuildPyWithPth})
