/**
 * An image checked and re-encoded inside a reader worker (sharp: libvips, prebuilt in its npm
 * packages). Its type and dimensions come from its decoded header, not its name or first bytes;
 * a declared size over the pixel cap is refused before any pixel is decoded; then the whole image
 * is decoded (a damaged or truncated one fails here) and re-encoded, which also drops its metadata
 * (EXIF location and the like). What the model is sent fits OpenAI's high-detail limits: the image
 * is scaled to fit 2048 × 2048 and then its short side to at most 768 px (larger is downscaled by
 * the endpoint anyway, after paying to upload it), well under the 20 MB per image.
 */
import sharp, { type Metadata } from "sharp";
import type { ImageRead, ReadCaps, Refused } from "./protocol.js";

/** OpenAI's high-detail image limits (platform.openai.com, "Images and vision": calculating costs). */
export const MODEL_IMAGE = { maxSide: 2048, maxShortSide: 768 } as const;

const FORMATS = new Set(["png", "jpeg", "gif", "webp"]);

/** The format the first bytes claim, to say what a file that does not decode pretended to be. */
function claimed(b: Uint8Array): string | undefined {
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "PNG";
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "JPEG";
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38) return "GIF";
  if (Buffer.from(b.subarray(8, 12)).toString("latin1") === "WEBP") return "WebP";
  return undefined;
}

const damaged = (format: string) =>
  `it is damaged: its header says ${format} but its data is not a valid image`;

// One thread of libvips per worker, no operation cache: the pool bounds the work, not libvips.
sharp.concurrency(1);
sharp.cache(false);

/** The size the model is sent: within both limits, never upscaled. */
export function modelSize(width: number, height: number): { width: number; height: number } {
  const scale = Math.min(
    1,
    MODEL_IMAGE.maxSide / Math.max(width, height),
    MODEL_IMAGE.maxShortSide / Math.min(width, height),
  );
  return {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
}

export async function readImage(
  bytes: Uint8Array,
  caps: ReadCaps,
  sha256: string,
): Promise<ImageRead | Refused> {
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    const format = claimed(bytes);
    if (format) return { ok: false, why: damaged(format) };
    return { ok: false, why: "it is not a PNG, JPEG, GIF or WebP image" };
  }
  const { format, width, height } = meta;
  if (!FORMATS.has(format) || !width || !height) {
    return { ok: false, why: `it is a ${format} file, not a PNG, JPEG, GIF or WebP image` };
  }
  if (width * height > caps.imagePixels) {
    return {
      ok: false,
      why: `it says it is ${width} × ${height} pixels, more than the ${caps.imagePixels.toLocaleString("en-US")} pixels I read`,
    };
  }
  // Orientation first (EXIF), so the limits apply to the image as it is seen.
  const turned = (meta.orientation ?? 1) >= 5;
  const size = modelSize(turned ? height : width, turned ? width : height);
  const png = format === "png" || format === "gif" || meta.hasAlpha;
  try {
    const pipeline = sharp(bytes, { limitInputPixels: caps.imagePixels, failOn: "warning" })
      .rotate()
      .resize(size.width, size.height, { fit: "fill" });
    const out = await (png ? pipeline.png({ compressionLevel: 6 }) : pipeline.jpeg({ quality: 85 })).toBuffer(
      {
        resolveWithObject: true,
      },
    );
    return {
      ok: true,
      kind: "image",
      sha256,
      format,
      width,
      height,
      sent: {
        type: png ? "image/png" : "image/jpeg",
        width: out.info.width,
        height: out.info.height,
        bytes: new Uint8Array(out.data),
      },
    };
  } catch {
    return { ok: false, why: damaged(claimed(bytes) ?? format.toUpperCase()) };
  }
}
