import { describe, expect, it } from 'vitest';
import { consultMessageBody, createConsultApi, newClientMessageId } from './consult-api';
import type { PostEventStream } from './event-stream';
import type { HttpClient } from './http-client';

describe('consultMessageBody', () => {
  it('sends words alone as JSON, and words with a photo as a form with the file part named image', async () => {
    expect(consultMessageBody({ message: 'A rash' })).toEqual({ message: 'A rash' });
    const photo = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], 'patch.png', { type: 'image/png' });
    const form = consultMessageBody({ message: 'Here it is', image: photo });
    expect(form).toBeInstanceOf(FormData);
    const sent = form as FormData;
    expect(sent.get('message')).toBe('Here it is');
    const image = sent.get('image') as File;
    expect(image.name).toBe('patch.png');
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
  });

  it('carries the message id in the JSON body and as a form field, so a retry is recognised as the same message', () => {
    const clientMessageId = newClientMessageId();
    expect(consultMessageBody({ message: 'A rash', clientMessageId })).toEqual({ message: 'A rash', clientMessageId });
    const photo = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], 'patch.png', { type: 'image/png' });
    expect((consultMessageBody({ message: 'Here it is', image: photo, clientMessageId }) as FormData).get('clientMessageId')).toBe(clientMessageId);
  });
});

describe('newClientMessageId', () => {
  const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  it('makes a new version-4 UUID for every message, also where crypto.randomUUID is missing (plain http)', () => {
    const ids = new Set(Array.from({ length: 50 }, () => newClientMessageId()));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    const randomUUID = crypto.randomUUID;
    Object.defineProperty(crypto, 'randomUUID', { value: undefined, configurable: true });
    try {
      const fallback = Array.from({ length: 50 }, () => newClientMessageId());
      expect(new Set(fallback).size).toBe(50);
      for (const id of fallback) expect(id).toMatch(UUID_V4);
    } finally {
      Object.defineProperty(crypto, 'randomUUID', { value: randomUUID, configurable: true });
    }
  });
});

describe('createConsultApi', () => {
  it("addresses each consult route with the session's id escaped", async () => {
    const calls: string[] = [];
    const http = {
      get: async (path: string) => (calls.push(`GET ${path}`), { sessions: [] }),
      post: async (path: string) => (calls.push(`POST ${path}`), { sessionId: 's1' }),
      getFile: async (path: string) => (calls.push(`FILE ${path}`), { blob: new Blob([]), filename: null }),
    } as unknown as HttpClient;
    const postEventStream = (async (path: string, body: unknown) => (calls.push(`STREAM ${path} ${JSON.stringify(body)}`), {})) as PostEventStream;
    const consult = createConsultApi(http, postEventStream);

    expect(await consult.list()).toEqual([]);
    await consult.start({ title: 'Rash' });
    await consult.get('a/b');
    await consult.streamMessage('a/b', { message: 'Weeks' }, { onEvent: () => {} });
    await consult.dossier('a/b');
    await consult.dossierFile('a/b', 'docx');
    await consult.attachment('a/b', 'img 1');
    expect(calls).toEqual([
      'GET /api/consult/sessions',
      'POST /api/consult/sessions',
      'GET /api/consult/sessions/a%2Fb',
      'STREAM /api/consult/sessions/a%2Fb/messages/stream {"message":"Weeks"}',
      'GET /api/consult/sessions/a%2Fb/dossier?format=json',
      'FILE /api/consult/sessions/a%2Fb/dossier?format=docx',
      'FILE /api/consult/sessions/a%2Fb/attachments/img%201',
    ]);
  });
});
