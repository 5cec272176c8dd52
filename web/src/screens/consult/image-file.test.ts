import { describe, expect, it } from 'vitest';
import { formatFileSize, imageProblem } from './image-file';

describe('imageProblem', () => {
  it('accepts JPEG, PNG and WebP, whatever the case of the type', () => {
    expect(imageProblem({ type: 'image/jpeg' })).toBeNull();
    expect(imageProblem({ type: 'image/PNG' })).toBeNull();
    expect(imageProblem({ type: 'image/webp' })).toBeNull();
  });

  it('refuses other declared types and leaves an undeclared type to the server', () => {
    expect(imageProblem({ type: 'image/heic' })).toBe('type');
    expect(imageProblem({ type: 'application/pdf' })).toBe('type');
    expect(imageProblem({ type: '' })).toBeNull();
  });
});

describe('formatFileSize', () => {
  it('reads as bytes, kilobytes or megabytes', () => {
    expect(formatFileSize(512)).toBe('512 B');
    expect(formatFileSize(86_000)).toBe('84 KB');
    expect(formatFileSize(3_355_443)).toBe('3.2 MB');
  });
});
