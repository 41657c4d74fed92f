"""Deep Generalized Q-learning agents (DQN, Double DQN, Maxmin, Averaged and Ensemble DQN).

The N networks of an agent and the S independent seeds of an experiment are held as one
stacked model with a leading member axis of size S x N, evaluated with batched matrix
products (``torch.baddbmm``; the convolution as ``torch.bmm`` on im2col patches), trained
with per-member optimisers that leave the state of members not updated untouched.

Modules: ``nets`` (stacked networks), ``optim`` (per-member RMSprop / Adam), ``replay``
(S preallocated replay buffers), ``agents`` (the learner: acting values, targets through
``maxminq.operators``, updates), ``config`` (``TrainConfig``) and ``train``
(``run_training``: the training loop, checkpoints, tables, bias metrics).
"""
