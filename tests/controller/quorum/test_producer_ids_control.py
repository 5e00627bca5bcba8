"""AllocateProducerIds: blocks of 1000 from the image's next producer id, as the real frames and logs show."""
from __future__ import annotations

import pytest

from kraftsman.controller.quorum.producer_ids_control import allocate_producer_ids
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .cluster_fixtures import M, broker_record, ctx, image_of, replay, wire


def test_golden_two_allocations():
    # broker 4 (epoch 36) asked first and got 0 (+1000); broker 5 (epoch 32) then got 1000
    image = image_of(broker_record(4, 36), broker_record(5, 32))
    for req_file, resp_file, next_id in [
            ("msgs/002210_c3_req_AllocateProducerIds_v0_c5.bin", "msgs/002216_c3_resp_AllocateProducerIds_v0_c5.bin",
             1000),
            ("msgs/002221_c3_req_AllocateProducerIds_v0_c6.bin", "msgs/002224_c3_resp_AllocateProducerIds_v0_c6.bin",
             2000)]:
        _, request = wire(req_file)
        _, expected = wire(resp_file)
        result = allocate_producer_ids(ctx(image), request)
        assert result.response == expected
        (record,) = result.records
        m = record.message
        # real-time-data-streaming-pipeline's log: ProducerIdsRecord v0 {brokerId, brokerEpoch, nextProducerId}
        assert (record.version, m.broker_id, m.broker_epoch, m.next_producer_id) == (
            0, request.broker_id, request.broker_epoch, next_id)
        image = replay(image, result.records)
    assert image.producer_ids.next_producer_id == 2000


@pytest.mark.parametrize("broker_id, epoch", [(4, 35), (9, 36)])
def test_stale_epoch(broker_id, epoch):
    result = allocate_producer_ids(ctx(image_of(broker_record(4, 36))),
                                   M("AllocateProducerIdsRequest", broker_id=broker_id, broker_epoch=epoch))
    assert (result.records, result.response.error_code) == ([], 77)


def test_exhausted_ids():
    last = ApiMessageAndVersion(M("ProducerIdsRecord", broker_id=4, broker_epoch=36,
                                  next_producer_id=2**63 - 1000), 0)
    image = image_of(broker_record(4, 36), last)
    result = allocate_producer_ids(ctx(image), M("AllocateProducerIdsRequest", broker_id=4, broker_epoch=36))
    assert (result.records, result.response.error_code) == ([], -1)
    image = image_of(broker_record(4, 36), last._replace(message=last.message.replace(next_producer_id=2**63 - 1001)))
    assert allocate_producer_ids(ctx(image), M("AllocateProducerIdsRequest", broker_id=4, broker_epoch=36)) \
        .response.producer_id_start == 2**63 - 1001
