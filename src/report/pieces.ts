// The reports of a big folder are written in pieces (output/atomic-write.ts's writeFileAtomic): big
// enough that the writes cost little, small enough that the whole file never sits in memory.

/** About 1 MB of text per write. */
export const PIECE_CHARS = 1 << 20;
