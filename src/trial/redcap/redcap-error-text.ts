/** REDCap answers errors as {"error": "..."}; anything else is shown as text. */
export function errorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    if (parsed && typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: an HTML error page or plain text.
  }
  return body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
}
