import { readFileSync } from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { ClinAgentError } from '../../core/errors.js';
import { packageRoot } from '../../core/paths.js';
import { decodeUpload } from './decode-upload.js';

const dictionaryText = readFileSync(path.join(packageRoot(), 'test-data', 'trial', 'redcap-dictionary.csv'), 'utf8').replace(/^\uFEFF/, '');

function refusal(bytes: Uint8Array, filename?: string): ClinAgentError {
  try {
    decodeUpload(bytes, { field: 'dictionary', filename });
  } catch (error) {
    if (ClinAgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

describe('decodeUpload', () => {
  it('reads UTF-8 and drops the byte-order mark Excel writes with "CSV UTF-8"', () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('record_id,年龄\n', 'utf8')]);
    expect(decodeUpload(withBom, { field: 'records' })).toEqual({ text: 'record_id,年龄\n', encoding: 'utf-8' });
    expect(decodeUpload(Buffer.from('record_id,age\n'), { field: 'records' })).toEqual({ text: 'record_id,age\n', encoding: 'utf-8' });
  });

  it('decodes a whole dictionary saved by Excel on Chinese Windows (GB18030)', () => {
    const bytes = iconv.encode(dictionaryText, 'gb18030');
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).toThrow();

    const decoded = decodeUpload(bytes, { field: 'dictionary', filename: '数据字典.csv' });

    expect(decoded.encoding).toBe('gb18030');
    expect(decoded.text).toBe(dictionaryText);
    expect(decoded.text).toContain('年龄（岁）Age, years');
  });

  it('decodes a short GBK file, too short for statistics, when every character is GB2312', () => {
    const bytes = iconv.encode('field_name,form_name,field_type,field_label\nrecord_id,f,text,编号\nage,f,text,年龄\n', 'gbk');
    expect(decodeUpload(bytes, { field: 'dictionary' }).text).toContain('age,f,text,年龄');
  });

  it('refuses Latin-1, Big5 and damaged files, naming the file and saying to save as CSV UTF-8', () => {
    const latin1 = iconv.encode('name,city\nMüller,Zürich\nJosé,São Paulo\n', 'latin1');
    const big5 = iconv.encode('field_name,field_label\nage,年齡 性別 體重 血壓 受試者編號 知情同意日期 訪視日期\n', 'big5');
    // A UTF-8 dictionary with one byte of 年 lost (a broken copy or transfer): neither UTF-8 nor GB18030.
    const utf8 = Buffer.from(dictionaryText, 'utf8');
    const at = utf8.indexOf(Buffer.from('年龄', 'utf8'));
    const damaged = Buffer.concat([utf8.subarray(0, at + 1), utf8.subarray(at + 2)]);
    for (const bytes of [latin1, big5, damaged]) {
      const error = refusal(bytes, 'export.csv');
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.status).toBe(400);
      expect(error.message).toContain('The file "export.csv" sent as "dictionary" is not UTF-8');
      expect(error.message).toContain('CSV UTF-8');
      expect(error.details).toEqual({ field: 'dictionary', filename: 'export.csv' });
    }
  });
});
