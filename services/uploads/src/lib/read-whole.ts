/** The whole of a (size-limited) file stream in memory: for files an image library needs whole (emoji, thumbnails). */
export async function readWhole(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}
