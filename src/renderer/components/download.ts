/** Saves text as a file through the browser's download (works in web mode and in the desktop window). */
export function downloadText(filename: string, content: string, contentType: string): void {
  downloadBlob(filename, new Blob([content], { type: contentType }));
}

export function downloadBlob(filename: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
