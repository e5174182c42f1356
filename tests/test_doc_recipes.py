"""The library recipes of the docs run as written (``imperiale_cli.devtools.doc_recipes``): each
section's commands and code in the test environment, which holds every library (the ``dev``
extra); ``python -m imperiale_cli.devtools.doc_recipes --fresh`` runs them in new venvs with only
their own install lines."""

from __future__ import annotations

import pytest

from imperiale_cli.devtools import doc_recipes

EXPECTED = {"features", "sb3", "torchrl", "tianshou", "cleanrl", "rllib", "openspiel"}
RECIPES = {r.name: r for r in doc_recipes.recipes()}


def test_every_library_page_has_its_recipe_with_its_install_lines():
    assert set(RECIPES) == EXPECTED
    for recipe in RECIPES.values():
        assert any(line.startswith("pip install -e ") for line in recipe.installs), recipe
        library_extra = {"sb3": "sb3", "torchrl": "torchrl", "tianshou": "tianshou", "rllib": "rllib",
                         "openspiel": "openspiel", "cleanrl": "train"}.get(recipe.name)
        if library_extra:
            assert any(library_extra in line for line in recipe.installs), recipe.installs
        if library_extra not in (None, "openspiel"):  # torch's CPU build first: a plain torch is the CUDA one
            assert recipe.installs[0].startswith("pip install torch=="), recipe.installs


def test_a_hash_inside_code_is_not_a_heading():
    text = "# Top\n```python\n# a comment\nx = 1\n```\n## Next\n```bash\npip install -e .\n```\n"
    sections = doc_recipes._sections(text)
    assert sections == [("Top", [("python", "# a comment\nx = 1\n")]), ("Next", [("bash", "pip install -e .\n")])]


def test_an_unknown_recipe_is_refused_naming_those_there_are():
    with pytest.raises(ValueError, match="no recipe 'keras'; there are: features, sb3"):
        doc_recipes.pick(list(RECIPES.values()), ["keras"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_recipe_runs_as_written(name):
    done = doc_recipes.run_recipe(RECIPES[name], fresh=False, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
