// Synthesises the "speech" of POST /v1/audios: a real WAV file whose length is plausible for the
// text, so that clients that read durations, sniff formats or feed the audio back as a condition
// see what they would see from the service. It is a quiet tone, not a voice.
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";

export const SPEECH_SAMPLE_RATE = 16_000;
/** Speakers say about 2.5 words a second; texts without spaces count about 6 characters a word. */
const WORDS_PER_SECOND = 2.5;
const CHARS_PER_WORD = 6;
const MIN_SECONDS = 1;

/** Seconds of speech for `text`, rounded to whole samples. */
export function speechSeconds(text: string): number {
  const words = text
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0).length;
  const units = Math.max(words, Math.ceil(text.trim().length / CHARS_PER_WORD));
  const seconds = Math.max(MIN_SECONDS, units / WORDS_PER_SECOND);
  return Math.round(seconds * SPEECH_SAMPLE_RATE) / SPEECH_SAMPLE_RATE;
}

function wavHeader(samples: number): Buffer {
  const dataBytes = samples * 2;
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVE", 8, "latin1");
  header.write("fmt ", 12, "latin1");
  header.writeUInt32LE(16, 16); // PCM fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SPEECH_SAMPLE_RATE, 24);
  header.writeUInt32LE(SPEECH_SAMPLE_RATE * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write("data", 36, "latin1");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

export interface SpeechFile {
  readonly seconds: number;
  readonly size: number;
}

/**
 * Writes the WAV for (voiceId, text) to `path`, one second at a time so long texts never sit in
 * memory whole. Each voice gets its own pitch, so two voices give two different files.
 */
export async function writeSpeech(path: string, voiceId: string, text: string): Promise<SpeechFile> {
  const seconds = speechSeconds(text);
  const samples = Math.round(seconds * SPEECH_SAMPLE_RATE);
  const frequency = 150 + Number(BigInt(voiceId) % 200n);
  const amplitude = 0.05 * 32767;
  const fade = SPEECH_SAMPLE_RATE / 50; // 20 ms ramps avoid clicks at both ends
  let file: FileHandle | undefined;
  try {
    file = await open(path, "w");
    await file.write(wavHeader(samples));
    for (let start = 0; start < samples; start += SPEECH_SAMPLE_RATE) {
      const count = Math.min(SPEECH_SAMPLE_RATE, samples - start);
      const block = Buffer.alloc(count * 2);
      for (let i = 0; i < count; i++) {
        const n = start + i;
        const envelope = Math.min(1, n / fade, (samples - 1 - n) / fade);
        const value = Math.round(
          amplitude * envelope * Math.sin((2 * Math.PI * frequency * n) / SPEECH_SAMPLE_RATE),
        );
        block.writeInt16LE(value, i * 2);
      }
      await file.write(block);
    }
  } finally {
    await file?.close();
  }
  return { seconds, size: 44 + samples * 2 };
}
