"""Fast paths, each a drop-in for a readable reference that it is tested against (``tests/test_kernels.py``).

- :mod:`lib.kernels.recurrence`: the tanh recurrence with hand-written backpropagation through time and the masked
  MSE of its readout with its gradients, replacing autograd through :func:`lib.paper_a.rnn.rollout`;
- :mod:`lib.kernels.adam`: Adam on one flat parameter vector, replacing ``torch.optim.Adam`` over the separate tensors.

Nothing here knows about tasks or papers; the readable code (``lib.paper_a.rnn``,
``lib.paper_a.reference_training``) calls these as it would call the reference. The kernels' code is part of the
trained-model cache key.
"""
