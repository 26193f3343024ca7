"""The docs follow what is installed: with the example plugin ``examples/plugin-onestep-gd`` pip-installed (as
``tests/test_plugins.py`` installs it), ``mkdocs build --strict`` gives it a page of its own in a "Plugins" section
right after "Papers" (where it comes from as ``iclab list`` says it, its claim records, its config table), and the
configs page says where its experiment comes from. Without a plugin there is no such section
(``docs/_hooks/generated_pages.py``)."""

import os
import re
from pathlib import Path

import pytest
from test_docs import build_site
from test_plugins import install_example_plugin

pytestmark = pytest.mark.slow  # a whole docs build (about 10 s on 2 cores)

ROOT = Path(__file__).resolve().parents[1]
ORIGIN = "[plugin iclab-onestep-gd 0.1.0]"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site built with the plugin on PYTHONPATH (and no ICLAB_EXPERIMENT_MODULES)."""
    plugin_site = install_example_plugin(tmp_path_factory)
    site = tmp_path_factory.mktemp("docs") / "site"
    env = {k: v for k, v in os.environ.items() if k != "ICLAB_EXPERIMENT_MODULES"}
    paths = [str(plugin_site), str(ROOT / "src"), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env.update(PYTHONPATH=os.pathsep.join(paths), NO_MKDOCS_2_WARNING="1", HF_HUB_OFFLINE="1")
    return build_site(site, env, timeout=900)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_plugin_has_a_page_with_its_origin_claims_and_config(built):
    page = built / "plugins" / "onestep-gd" / "index.html"
    assert page.is_file(), "no page for the installed plugin"
    text = _text(page.read_text())
    assert ORIGIN in text  # as `iclab list` prints it
    assert "an iclab plugin: installing this package registers the experiment" in text.lower()  # package docstring
    assert "Notes of onestep-gd" in text  # notes.py's docstring
    assert "Claims of the full preset" in text  # no paper preset: the full one
    for claim_id in ("gd-step-beats-zero", "gd-step-matches-ols"):
        assert claim_id in text
    assert "effect direction" in text and "theory vs simulation" in text and "95 % CI" in text
    assert "field type quick full allowed meaning" in text  # the config table's header, as on the configs page
    assert "prompts int 2000 20000" in text and "the GD step size" in text


def test_the_nav_has_a_plugins_section_after_papers(built):
    home = _text((built / "index.html").read_text())
    papers, plugins, cli = home.index(" Papers "), home.index(" Plugins "), home.index(" Command line ")
    assert papers < plugins < cli
    assert 'href="plugins/onestep-gd/"' in (built / "index.html").read_text()


def test_the_configs_page_says_where_the_plugins_experiment_comes_from(built):
    configs = (built / "configs" / "index.html").read_text()
    origins = re.findall(r"config <code>\w+</code>, from <code>([^<]+)</code>", configs)
    assert origins == ["plugin iclab-onestep-gd 0.1.0"]  # iclab's own experiments say nothing
    assert 'href="../plugins/onestep-gd/"' in configs
