"""The snake agent's learning mechanics: the target network follows the online one only by its soft
update (tau per learning step, never by gradient), the TD target is valued by the target network on
the online network's choice of move (Double DQN), and epsilon falls linearly from eps_start to eps_end
over eps_decay_fraction of the budget, then stays."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.demos.snake.agent import AgentConfig, DQNAgent, ModelConfig, Replay  # noqa: E402
from hwbench_gui.demos.snake.train import TrainConfig, make_agent, train  # noqa: E402

SIDE, CHANNELS, FEATURES = 4, 4, 12


def _agent(tau=0.005, seed=3):
    model = ModelConfig(side=SIDE, channels=CHANNELS, features=FEATURES, hidden=16)
    return DQNAgent(AgentConfig(lr=1e-2, gamma=0.9, n_step=2, batch=32, tau=tau, model=model), seed=seed)


def _replay(seed=0, rows=12, boards=4):
    rng = np.random.default_rng(seed)
    replay = Replay(rows, boards, (CHANNELS, SIDE, SIDE), FEATURES)
    for _ in range(rows):
        replay.add(rng.random((boards, CHANNELS, SIDE, SIDE)), rng.random((boards, FEATURES)),
                   rng.integers(0, 3, boards), rng.normal(size=boards).astype(np.float32), rng.random(boards) < 0.2)
    return replay


def _params(net):
    return [p.detach().clone() for p in net.parameters()]


def test_target_starts_as_a_copy_and_takes_no_gradient():
    agent = _agent()
    assert all(torch.equal(a, b) for a, b in zip(_params(agent.online), _params(agent.target)))
    assert not any(p.requires_grad for p in agent.target.parameters())
    assert all(p.requires_grad for p in agent.online.parameters())


def test_each_learning_step_moves_the_target_by_tau_toward_the_online_net():
    tau = 0.25
    agent, replay = _agent(tau=tau), _replay()
    for _ in range(3):
        target_before = _params(agent.target)
        agent.learn(replay)
        online_after = _params(agent.online)
        for old, new, now in zip(target_before, online_after, _params(agent.target)):
            torch.testing.assert_close(now, old + tau * (new - old))
    assert agent.updates == 3
    # After three soft steps the target lags: it is not the online net.
    assert any(not torch.allclose(a, b) for a, b in zip(_params(agent.online), _params(agent.target)))


def test_with_tau_zero_the_target_stays_frozen_while_the_online_net_learns():
    agent, replay = _agent(tau=0.0), _replay()
    frozen, online_before = _params(agent.target), _params(agent.online)
    for _ in range(4):
        agent.learn(replay)
    assert all(torch.equal(a, b) for a, b in zip(frozen, _params(agent.target)))
    assert any(not torch.equal(a, b) for a, b in zip(online_before, _params(agent.online)))


def test_td_target_is_the_target_nets_value_of_the_online_nets_move():
    agent, replay = _agent(tau=0.0), _replay()
    with torch.no_grad():
        agent.target.value.bias += 5.0             # the target net values every state 5 higher
        agent.target.advantage.bias[2] += 50.0     # and prefers move 2 everywhere
    cfg = agent.cfg
    batch = replay.sample(cfg.batch, cfg.n_step, cfg.gamma, copy.deepcopy(agent.rng))
    g, f, a, ret, disc, g2, f2 = (torch.as_tensor(np.asarray(x)) for x in batch)
    g, f, g2, f2 = (x.float() for x in (g, f, g2, f2))
    with torch.no_grad():
        q = agent.online(g, f).gather(1, a.long().unsqueeze(1)).squeeze(1)
        online_next, target_next = agent.online(g2, f2), agent.target(g2, f2)
        pick = online_next.argmax(dim=1, keepdim=True)

        def loss_with(next_value):
            return float(torch.nn.functional.smooth_l1_loss(q, ret + disc * next_value))

        double_dqn = loss_with(target_next.gather(1, pick).squeeze(1))
        online_valued = loss_with(online_next.gather(1, pick).squeeze(1))
        target_max = loss_with(target_next.max(dim=1).values)
    loss = float(agent.learn(replay))
    assert loss == pytest.approx(double_dqn, rel=1e-5)
    # The alternatives are far off, so the test tells them apart.
    assert abs(online_valued - double_dqn) > 1.0 and abs(target_max - double_dqn) > 1.0


def test_act_explores_with_probability_epsilon():
    agent = _agent(seed=11)
    rng = np.random.default_rng(5)
    n = 3000
    grid, feats = rng.random((n, CHANNELS, SIDE, SIDE)), rng.random((n, FEATURES))
    greedy = agent.q_values(grid, feats).argmax(axis=1)
    assert np.array_equal(agent.act(grid, feats, 0.0), greedy)
    random_moves = agent.act(grid, feats, 1.0)
    # Uniform over 3 moves: about a third agree with the greedy move (3000 boards: ±0.05 is > 5 sigma).
    assert abs(np.mean(random_moves == greedy) - 1 / 3) < 0.05
    assert set(np.unique(random_moves)) == {0, 1, 2}


def test_epsilon_schedule_at_start_middle_and_end(monkeypatch):
    # 4 boards, 400 transitions: 100 moves, and move k is taken at k / 100 of the budget.
    config = TrainConfig(height=6, width=6, n_boards=4, minutes=None, max_transitions=400, learn_start=10**9,
                         hidden=16, replay_rows=200, eps_start=1.0, eps_end=0.01, eps_decay_fraction=0.5, seed=0)
    agent = make_agent(config)
    seen: list[float] = []
    act = agent.act

    def recording_act(grid, feats, epsilon=0.0):
        seen.append(float(epsilon))
        return act(grid, feats, epsilon)

    monkeypatch.setattr(agent, "act", recording_act)
    result = train(config, agent=agent)
    assert result.stats["transitions"] == 400 and len(seen) == 100
    expected = [max(0.01, 1.0 - 0.99 * (k / 100) / 0.5) for k in range(100)]
    assert seen == pytest.approx(expected)
    assert seen[0] == 1.0                               # start
    assert seen[25] == pytest.approx(0.505)             # half-way through the decay
    assert seen[50] == pytest.approx(0.01) and seen[99] == pytest.approx(0.01)  # end of decay, and after
