"""The numpy forward pass (features included) plays exactly what torch's does: a network of feature version 2
compared decision by decision over a hundred thousand decisions of random play."""

from __future__ import annotations

import numpy as np
import pytest

from imperiale_agents.policies.neural import NeuralAgent
from imperiale_agents.policies.policy_net import PolicyNet
from imperiale_env.batch import BatchGame
from imperiale_env.kernels.features import FEATURE_SIZE, policy_features

torch = pytest.importorskip("torch")


def test_numpy_and_torch_choose_the_same_card_on_every_decision(tmp_path):
    from imperiale_agents.policies.policy_file import net_from_state, policy_archive_bytes
    from imperiale_train.model import Policy

    torch.manual_seed(0)
    policy = Policy((256, 256), "relu")
    with torch.no_grad():
        policy.net[-1].weight.mul_(300.0)  # logits of a trained network's spread, not the initial near-uniform ones
    policy.eval()
    net = net_from_state(policy.state_dict(), {"activation": "relu"}, "net.", "memory")
    assert isinstance(net, PolicyNet) and net.input_size == FEATURE_SIZE
    (tmp_path / "p.npz").write_bytes(policy_archive_bytes(net, {}, {}, {"iteration": 0}))
    agent = NeuralAgent(tmp_path / "p.npz")
    game = BatchGame("academie", 1024, auto_next_game=True)
    game.reset(seed=5)
    rng = np.random.default_rng(0)
    decisions, worst, ties = 0, 0.0, 0
    while decisions < 100_000:
        obs, mask = game.observe(), game.legal_action_mask()
        with torch.no_grad():
            logits = policy(torch.from_numpy(policy_features(obs)), torch.from_numpy(mask))
        ours, torch_choice = agent.act(obs, mask), logits.argmax(1).numpy()
        differ = np.flatnonzero(ours != torch_choice)
        # Only where the two best logits are equal to float32 rounding (the sums of 836 inputs
        # are added in another order by numpy's and torch's matrix products).
        gap = np.abs(logits.numpy()[differ, ours[differ]] - logits.numpy()[differ, torch_choice[differ]])
        assert (gap < 1e-5).all(), gap
        ties += len(differ)
        theirs = torch.log_softmax(logits, -1).numpy()
        worst = max(worst, float(np.abs(np.where(mask, agent.log_probs(obs, mask) - theirs, 0.0)).max()))
        decisions += len(obs)
        game.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
    assert worst < 1e-4
    assert ties <= 10  # measured: 1 in 100,352 decisions


def test_the_champion_plays_without_torch(tmp_path):
    """In a process where torch cannot be imported, the champion still loads and plays."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None\n"
            "import numpy as np\n"
            "from imperiale_agents.base import make_agent\n"
            "from imperiale_env.batch import BatchGame\n"
            "bot = make_agent('champion', 'academie')\n"
            "g = BatchGame('academie', 4); g.reset(seed=1)\n"
            "m = g.legal_action_mask(); a = bot.act(g.observe(), m)\n"
            "assert m[np.arange(4), a].all()\n"
            "assert 'torch' not in {k for k, v in sys.modules.items() if v is not None}\n"
            "print('played', a.tolist())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "played" in out.stdout, out.stderr
