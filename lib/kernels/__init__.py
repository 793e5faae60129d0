"""Fast paths, each a drop-in for a readable reference that it is tested against (``tests/kernels/``).

- :mod:`lib.kernels.recurrence`: the tanh recurrence with hand-written backpropagation through time and the masked
  MSE of its readout with its gradients, replacing autograd through :func:`lib.paper_a.rnn.rollout`;
- :mod:`lib.kernels.seed_batch`: the same loss and gradients for several networks at once, the book's RNN training
  (``lib.paper_a.batched_training``);
- :mod:`lib.kernels.adam`: Adam on one flat parameter vector, replacing ``torch.optim.Adam`` over the separate tensors.

Nothing here knows about tasks or papers; ``lib.paper_a.rnn.rollout_fast`` and the book's training call these as they
would call the reference. The reference training is the textbook loop ``lib.paper_a.reference_training`` (autograd,
``torch.optim.Adam``), which calls none of them. The kernels' code is part of the trained-model cache key.
"""
