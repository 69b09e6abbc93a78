"""DQN snake: vectorised game, observation, agent, training loop and checkpoints; no Qt.

Modules: ``game`` (numpy boards, the rules), ``observation`` (what the agent sees), ``agent``
(torch: Q-network, replay, Double DQN with n-step returns), ``train`` (the loop with callbacks,
greedy evaluation), ``checkpoint`` (save/load, the shipped model). Only ``agent`` imports torch at
module level; everything else imports it inside the functions that need it.
"""
