/**
 * A multipart/form-data body for `app.inject` or fetch: text fields, then files. Tests build uploads with this
 * one helper so every route's multipart parsing is exercised with the same framing a browser sends.
 */
export interface MultipartFile {
  name: string;
  content: Buffer | string;
  type?: string;
}

export function multipartBody(parts: { fields?: Record<string, string>; files?: Record<string, MultipartFile> }): { payload: Buffer; headers: { 'content-type': string } } {
  const boundary = '----clinagent' + Math.random().toString(16).slice(2);
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(parts.fields ?? {})) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const [field, file] of Object.entries(parts.files ?? {})) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'text/csv'}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
