"""The meter averages the loss and the objective's figures over the updates of a log line,
and carries them through a checkpoint."""

import torch

from induce.models.base import Loss
from induce.train.bookkeeping import Meter


def test_figures_are_averaged_like_the_loss_and_survive_a_checkpoint():
    meter = Meter()
    meter.add(Loss(torch.tensor(3.0), {"hinge": torch.tensor(2.0)}), 10)
    saved = Meter()
    saved.restore(meter.state())  # a stop between two updates of one log line
    for m in (meter, saved):
        m.add(Loss(torch.tensor(1.0), {"hinge": torch.tensor(0.5)}), 10)
    for m in (meter, saved):
        record = m.record(2, 0, 1e-3, 10)
        assert (record["loss"], record["hinge"]) == (2.0, 1.25)
        assert list(record)[:4] == ["step", "epoch", "loss", "hinge"]


def test_a_checkpoint_of_an_older_meter_has_no_figures():
    meter = Meter()
    meter.restore({"losses": [1.0], "tokens": 3})
    meter.add(Loss(torch.tensor(3.0)), 1)
    assert meter.record(2, 0, 1e-3, 2)["loss"] == 2.0
