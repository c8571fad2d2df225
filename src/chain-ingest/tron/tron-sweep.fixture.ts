import type { SweepRequest } from '../../sweeper/sweeper.ts';
import { evmToTron } from './address.ts';

/** The local chain's factory and test USDT (the devnet deployer's first contracts), in T… form. */
export const fixtureFactory = evmToTron('0x5FbDB2315678afecb367f032d93F642f64180aa3');
export const fixtureUsdt = evmToTron('0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512');

/** One session's USDT deposit to sweep to its merchant, T… addresses. */
export const fixtureSweepRequest: SweepRequest = {
  checkoutSessionId: '0b9e4a8c-1f6d-4c2a-9e57-3d1b2f8a6c40',
  depositAddress: evmToTron('0x08D6D6121c3C897FF76b3BECb02b2A5b75fF6979'),
  merchantAddress: evmToTron('0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc'),
  assets: [fixtureUsdt],
};
