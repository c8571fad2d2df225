import test from 'ava';
import { utils } from 'tronweb';
import { decodeTronTriggerRaw, encodeTronTriggerRaw, TRIGGER_SMART_CONTRACT } from './tron-raw-transaction.ts';

const raw = {
  refBlockBytes: '1234',
  refBlockHash: '0102030405060708',
  expiration: 1_700_000_060_000n,
  timestamp: 1_700_000_000_000n,
  feeLimit: 31_500_000n,
  contracts: [
    {
      type: TRIGGER_SMART_CONTRACT,
      owner: '41dd791d6b49e190062d650e6a23c575510d35f2f9',
      contract: '41eca9bc828a3005b9a3b909f2cc5c2a54794de05f',
      callValue: 0n,
      data: 'a9059cbb000000000000000000000000088a2bfcb1c7271029fd69a66859d555608958840000000000000000000000000000000000000000000000000000000000000064',
    },
  ],
};

test('the protobuf of a TriggerSmartContract transaction is what tronweb encodes from the node’s JSON', (t) => {
  const json = {
    visible: false,
    raw_data: {
      contract: [
        {
          parameter: {
            value: {
              data: raw.contracts[0]!.data,
              owner_address: raw.contracts[0]!.owner,
              contract_address: raw.contracts[0]!.contract,
            },
            type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
          },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: raw.refBlockBytes,
      ref_block_hash: raw.refBlockHash,
      expiration: Number(raw.expiration),
      fee_limit: Number(raw.feeLimit),
      timestamp: Number(raw.timestamp),
    },
  };
  const reference = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb(json)).toLowerCase();
  t.is(encodeTronTriggerRaw(raw), reference);
  t.deepEqual(decodeTronTriggerRaw(reference), raw);
});

test('a call value is read back, and bytes that are not a transaction are refused', (t) => {
  const paying = { ...raw, contracts: [{ ...raw.contracts[0]!, callValue: 5n }] };
  t.is(decodeTronTriggerRaw(encodeTronTriggerRaw(paying)).contracts[0]!.callValue, 5n);
  t.throws(() => decodeTronTriggerRaw('0aff'), { message: /truncated/ });
  t.throws(() => decodeTronTriggerRaw('zz'), { message: /not hex/ });
});
