"""The README: at most 300 lines, opening with the two commands; its first example and
the multi-agent training example of the docs run as written (every other block:
``tests/test_docs.py``)."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parent.parent / "README.md"
MULTIAGENT = README.parent / "docs" / "multiagent.md"


def test_readme_opens_with_the_two_commands_in_at_most_300_lines():
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    first_block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    assert "make demo" in first_block and "make test" in first_block


def test_readme_says_how_to_use_what_make_installed():
    """After ``make``, a plain ``python`` has no Gymnasium: the README says which to use,
    and its own-script block sets torch's threads (small networks run ~20x faster)."""
    text = README.read_text()
    assert "source .venv/bin/activate" in text and ".venv/bin/python" in text
    sb3 = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "MaskablePPO" in b]
    assert sb3 and "torch.set_num_threads(1)" in sb3[0] and len(sb3[0].splitlines()) <= 20


def test_readme_example_runs():
    example = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    namespace: dict = {}
    exec(compile(example, "README example", "exec"), namespace)
    assert namespace["terminated"] or namespace["truncated"]


def test_the_aec_training_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", MULTIAGENT.read_text(), re.S)
    (example,) = [b for b in blocks if b.startswith("# AEC training example")]
    namespace: dict = {}
    exec(compile(example, "README AEC example", "exec"), namespace)
    learners = namespace["learners"]
    assert all(np.abs(learner.w).sum() > 0 for learner in learners.values())  # both learned something
