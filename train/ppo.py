"""The masked PPO update (clipped objective, value loss, entropy bonus), CleanRL style.

The advantages come from :mod:`rollout` (GAE over each seat's own decisions).  The policy's
logits are masked (illegal actions get :data:`~imperiale_train.model.MASK_VALUE`) in the rollout and in
the update alike, so the ratio and the entropy only involve legal actions.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from imperiale_train.config import TrainConfig
from imperiale_train.model import ActorCritic
from imperiale_train.rollout import RolloutBatch


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, batch: RolloutBatch, cfg: TrainConfig,
               rng: np.random.Generator) -> dict[str, float]:
    """``update_epochs`` passes over ``batch`` in ``num_minibatches`` shuffled minibatches
    (the permutation drawn from ``rng``, for deterministic resumes).  Returns mean statistics."""
    size = len(batch)
    mb = max(1, size // cfg.num_minibatches)
    sums: dict[str, float] = {}
    count = 0
    stop = False
    for _ in range(cfg.update_epochs):
        perm = torch.from_numpy(rng.permutation(size)).to(batch.actions.device)
        for start in range(0, size - mb + 1, mb):
            idx = perm[start : start + mb]
            hidden = None if batch.hidden is None else batch.hidden[idx]
            logp, entropy, value = model.evaluate(batch.features[idx], batch.mask[idx], hidden, batch.actions[idx])
            log_ratio = logp - batch.logprobs[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clipfrac = ((ratio - 1.0).abs() > cfg.clip_coef).float().mean()
            adv = batch.advantages[idx]
            if cfg.norm_adv and len(idx) > 1:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(ratio, 1 - cfg.clip_coef, 1 + cfg.clip_coef)).mean()
            ret = batch.returns[idx]
            if cfg.clip_vloss:
                old = batch.values[idx]
                clipped = old + torch.clamp(value - old, -cfg.clip_coef, cfg.clip_coef)
                v_loss = 0.5 * torch.max((value - ret) ** 2, (clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((value - ret) ** 2).mean()
            ent = entropy.mean()
            loss = pg_loss - cfg.ent_coef * ent + cfg.vf_coef * v_loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            for k, v in (("loss/policy", pg_loss), ("loss/value", v_loss), ("loss/entropy", ent),
                         ("loss/approx_kl", approx_kl), ("loss/clipfrac", clipfrac), ("loss/grad_norm", grad_norm)):
                sums[k] = sums.get(k, 0.0) + float(v.detach())
            count += 1
            if cfg.target_kl and float(approx_kl) > cfg.target_kl:
                stop = True
                break
        if stop:
            break
    out = {k: v / max(count, 1) for k, v in sums.items()}
    ret, val = batch.returns, batch.values
    var = float(ret.var()) if len(ret) > 1 else float("nan")
    out["loss/explained_variance"] = float("nan") if not var else 1.0 - float((ret - val).var()) / var
    out["loss/minibatches"] = float(count)
    return out
