import { describe, expect, it } from 'vitest';
import { summarizeAudit } from './audit-changes';

describe('summarizeAudit', () => {
  it('lists each changed record field with its old and new value', () => {
    const summary = summarizeAudit({ eventName: 'baseline', data: { sbp: 150, dbp: null } }, { eventName: 'baseline', data: { sbp: 145, dbp: 90 } });
    expect(summary).toEqual({
      eventName: 'baseline',
      changes: [
        { key: 'sbp', before: '150', after: '145' },
        { key: 'dbp', before: '', after: '90' },
      ],
    });
  });

  it('shows a created record as values set from nothing and leaves out unchanged context', () => {
    expect(summarizeAudit(null, { eventName: 'baseline', site: 'SITE-01', data: { age: 40 } }).changes).toEqual([
      { key: 'site', before: '', after: 'SITE-01' },
      { key: 'age', before: '', after: '40' },
    ]);
    expect(summarizeAudit({ status: 'SUSPENDED', node: 'review' }, { status: 'RUNNING', node: 'review' }).changes).toEqual([
      { key: 'status', before: 'SUSPENDED', after: 'RUNNING' },
    ]);
  });
});
