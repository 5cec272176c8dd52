import { describe, expect, it } from 'vitest';
import { slug } from './odm-elements.js';

describe('slug', () => {
  it('turns ODM names and OIDs into REDCap-style variable names', () => {
    expect(slug('Age at consent')).toBe('age_at_consent');
    expect(slug('I.AGE')).toBe('i_age');
    expect(slug('  Follow-up (week 4) ')).toBe('follow_up_week_4');
  });

  it('gives nothing for a name that cannot start with a letter, so the caller falls back to the OID', () => {
    expect(slug('4 weeks')).toBeUndefined();
    expect(slug('随访')).toBeUndefined();
    expect(slug(undefined)).toBeUndefined();
  });
});
