import type { ChainedEvent } from '../event-store/event-store.ts';
import {
  BundleEventSchema,
  BundleHeaderSchema,
  BundleWithheldSchema,
  belongsToBundle,
  ownTags,
  type BundleHeader,
} from './audit-bundle.ts';
import { linkHash, linkHashV1 } from '../event-store/event-chain.ts';
import { CHECKPOINT_SIGNED, CHECKPOINT_STREAM, publishedCheckpointOf, type LoggedCheckpoint } from './checkpoints.ts';
import {
  byPosition,
  verifyChain,
  type ChainProblemKind,
  type ChainReport,
  type ChainSource,
  type WithheldEvent,
} from './verify-chain.ts';

export type BundleProblemKind =
  | ChainProblemKind
  /** The first line is not a bundle header: nothing else can be checked. */
  | 'header_malformed'
  /** A line that is neither an event nor a withheld link (its `position` is the line number's event, when readable). */
  | 'line_malformed'
  /** The bundle does not end at the head its header names: events cut from its end, or added. */
  | 'head_mismatch'
  /** An event in full that is neither the organization's nor a checkpoint: another tenant's content. */
  | 'foreign_event'
  /** A withheld line whose tenant tag is the organization's: one of its own events, its content hidden. */
  | 'withheld_own';

export type BundleProblem = { kind: BundleProblemKind; position: string | null; message: string };

export type BundleReport = {
  /** The header reads, every own hash recomputes, every link follows, every checkpoint holds. */
  holds: boolean;
  header: BundleHeader | null;
  /** Events held in full (the organization's and the checkpoints): each hash recomputed from its content. */
  events: number;
  /** Other tenants' events: position, digest, tenant tag and link only. */
  withheld: number;
  /**
   * Withheld lines without a tenant tag (chain v1 links, or a version-1 bundle): their links
   * recompute, but whether they are the organization's own events cannot be checked.
   */
  legacyWithheld: number;
  /** The organization's events after the last checkpoint position: no signature vouches for them yet. */
  unsigned: number;
  /** Every problem in log order (chain and bundle), the first `firstProblem`. */
  problems: BundleProblem[];
  firstProblem: BundleProblem | null;
  chain: ChainReport | null;
};

type Line = ChainedEvent | WithheldEvent;

const linkOf = (previous: string | null, hash: string | null) =>
  previous !== null && hash !== null ? { previous, hash } : null;

const checkpointIn = (event: ChainedEvent): LoggedCheckpoint | null => {
  if (event.content.type !== CHECKPOINT_SIGNED) return null;
  try {
    const checkpoint = publishedCheckpointOf(JSON.parse(event.content.data));
    return checkpoint && { ...checkpoint, loggedAt: String(event.position) };
  } catch {
    return null;
  }
};

const PAGE = 1000;

/**
 * Checks a bundle (`auditBundleLines`) offline: the same walk as `weir audit verify` over the
 * bundle's lines in the order they are written, so a removed, inserted or reordered line breaks a
 * link where it is. `trustedKeys`: the keys checkpoints must be signed with; empty: the header's.
 */
export async function verifyBundle(deps: {
  text: string;
  trustedKeys: readonly string[];
  published?: readonly LoggedCheckpoint[];
}): Promise<BundleReport> {
  const problems: BundleProblem[] = [];
  const [first = '', ...rest] = deps.text.split('\n');
  const parsedHeader = (() => {
    try {
      return BundleHeaderSchema.safeParse(JSON.parse(first));
    } catch {
      return null;
    }
  })();
  if (!parsedHeader?.success) {
    const problem: BundleProblem = {
      kind: 'header_malformed',
      position: null,
      message: 'the first line is not a weir audit bundle header (format weir-audit-bundle, version 1 or 2)',
    };
    return {
      holds: false,
      header: null,
      events: 0,
      withheld: 0,
      legacyWithheld: 0,
      unsigned: 0,
      problems: [problem],
      firstProblem: problem,
      chain: null,
    };
  }
  const header = parsedHeader.data;
  const scope = { organizationId: header.organizationId, environment: header.environment };

  /**
   * Whether a withheld line is one of the organization's own events: its tag is an own tag, or it
   * carries none and its link hashes an own tag (the tag taken away, which no v1 link recomputes).
   */
  const withholdsOwn = (previous: string, digest: string, tenant: string | null, hash: string): boolean => {
    const own = ownTags(scope, previous);
    if (tenant !== null) return own.includes(tenant);
    return linkHashV1(previous, digest) !== hash && own.some((tag) => linkHash(previous, digest, tag) === hash);
  };

  const lines: Line[] = [];
  let legacyWithheld = 0;
  rest.forEach((text, index) => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = null;
    }
    const event = BundleEventSchema.safeParse(value);
    const withheld = event.success ? null : BundleWithheldSchema.safeParse(value);
    if (event.success) {
      const { position, previous, hash, ...content } = event.data;
      lines.push({ position: BigInt(position), content, link: linkOf(previous, hash) });
      if (!belongsToBundle(scope, content))
        problems.push({
          kind: 'foreign_event',
          position,
          message: `the event at ${position} is neither ${header.organizationId}'s nor a checkpoint`,
        });
    } else if (withheld?.success) {
      const { position, digest, tenant = null, previous, hash } = withheld.data;
      lines.push({ position: BigInt(position), content: null, digest, tenant, link: linkOf(previous, hash) });
      if (tenant === null) legacyWithheld += 1;
      if (previous !== null && hash !== null && withholdsOwn(previous, digest, tenant, hash))
        problems.push({
          kind: 'withheld_own',
          position,
          message: `the event at ${position} is ${header.organizationId}'s but its content was withheld`,
        });
    } else {
      const position = (value as { position?: unknown } | null)?.position;
      problems.push({
        kind: 'line_malformed',
        position: typeof position === 'string' ? position : null,
        message: `line ${index + 2} is neither an event nor a withheld link`,
      });
    }
  });

  const held = lines.filter((line): line is ChainedEvent => line.content !== null);
  const source: ChainSource = {
    start: async () =>
      header.chainStart && {
        unchainedThrough:
          header.chainStart.unchainedThrough === null ? null : BigInt(header.chainStart.unchainedThrough),
        seal: header.chainStart.seal,
      },
    headPosition: async () => lines.at(-1)?.position ?? null,
    checkpoints: async () =>
      held
        .filter((event) => event.content.streamId === CHECKPOINT_STREAM)
        .map((event) => ({ position: event.position, checkpoint: checkpointIn(event) })),
    async *pages() {
      for (let index = 0; index < lines.length; index += PAGE) yield lines.slice(index, index + PAGE);
    },
  };
  const chain = await verifyChain({
    source,
    trustedKeys: deps.trustedKeys.length > 0 ? deps.trustedKeys : header.publicKeys,
    published: deps.published,
  });

  const endsAt = chain.head;
  if (endsAt?.position !== header.head?.position || endsAt?.hash !== header.head?.hash)
    problems.push({
      kind: 'head_mismatch',
      position: endsAt?.position ?? null,
      message: `the bundle ends at ${endsAt ? `${endsAt.position} (${endsAt.hash})` : 'nothing'}, its header at ${header.head ? `${header.head.position} (${header.head.hash})` : 'nothing'}: lines were cut from its end or added`,
    });

  const signedThrough = [...(await source.checkpoints()).map((c) => c.checkpoint), ...(deps.published ?? [])]
    .map((checkpoint) => (checkpoint ? BigInt(checkpoint.position) : -1n))
    .reduce((a, b) => (a > b ? a : b), -1n);
  const unsigned = held.filter(
    (event) => event.content.streamId !== CHECKPOINT_STREAM && event.position > signedThrough,
  ).length;

  const all = [...chain.problems, ...problems].sort(byPosition);
  return {
    holds: chain.holds && problems.length === 0,
    header,
    events: held.length,
    withheld: lines.length - held.length,
    legacyWithheld,
    unsigned,
    problems: all,
    firstProblem: all[0] ?? null,
    chain,
  };
}

/** The summary a person reads. */
export function bundleSummaryOf(
  report: BundleReport,
  /** The lines naming the key(s) trusted, and those telling where each checkpoint came from. */
  against: { trust: readonly string[]; sources: readonly string[] } = { trust: [], sources: [] },
): string {
  const { header, chain } = report;
  // A bundle of one environment withholds the organization's other one too: not another tenant's only.
  const other = header?.environment === 'live' ? 'test' : header?.environment === 'test' ? 'live' : null;
  const withheld = `other organizations' events${other ? ` and this one's ${other} events` : ''}`;
  const lines = [
    header
      ? `bundle: ${header.organizationId}${header.environment ? ` (${header.environment})` : ''}, exported ${header.exportedAt}, head ${header.head ? `${header.head.position} ${header.head.hash}` : '-'}`
      : 'bundle: unreadable header',
    `events: ${report.events.toLocaleString('en-US')} held in full (hashes recomputed), ${report.withheld.toLocaleString('en-US')} withheld (${withheld}; links only)`,
    report.legacyWithheld > 0
      ? `  ${report.legacyWithheld.toLocaleString('en-US')} withheld ${report.legacyWithheld === 1 ? 'link is' : 'links are'} chain v1 (${header?.version === 1 ? 'a version-1 bundle' : 'appended before the tenant tag'}): whether ${report.legacyWithheld === 1 ? 'it is' : 'they are'} this organization's own cannot be checked`
      : null,
    ...against.trust,
    chain
      ? `checkpoints: ${chain.checkpoints.checked} checked${chain.checkpoints.latest ? `, latest for position ${chain.checkpoints.latest.position}` : ''}`
      : null,
    ...against.sources,
    report.unsigned > 0
      ? `  ${report.unsigned} of the organization's events come after the last checkpoint: no signature covers them yet`
      : null,
    ...report.problems
      .slice(0, 10)
      .map((problem) => `  ${problem.kind} at ${problem.position ?? '-'}: ${problem.message}`),
    report.problems.length > 10 ? `  … and ${report.problems.length - 10} more (see the JSON report)` : null,
    report.holds ? 'OK: the bundle holds' : 'FAILED',
  ];
  return lines.filter((line) => line !== null).join('\n');
}
