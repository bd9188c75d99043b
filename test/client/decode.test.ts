// Decoding the service's answers: ids stay exact whichever JSON parser reads the body (short numbers
// take JSON.parse, long ones lossless-json), and a malformed body is a DecodeError, not a crash.
import { describe, expect, it } from "vitest";
import { decodeIdResponse, decodeTask, parseJson } from "../../src/client/decode.js";
import { DecodeError } from "../../src/errors/service.js";

const idOf = (text: string): string => decodeIdResponse(parseJson(text)).id;

describe("parseJson and ids", () => {
  it("reads a short id as its decimal string", () => {
    expect(idOf('{"id": 42}')).toBe("42");
    expect(idOf('{"id": "42"}')).toBe("42");
    expect(idOf('{"id": 999999999999999}')).toBe("999999999999999"); // 15 digits
  });

  it("keeps ids of 16 digits and more exact, where a double would round them", () => {
    expect(idOf('{"id": 9007199254740993}')).toBe("9007199254740993"); // 2^53 + 1
    expect(idOf('{"id": 1800000000000000001}')).toBe("1800000000000000001");
    expect(idOf('{"id": 18446744073709551615}')).toBe("18446744073709551615");
  });

  it("keeps a long id exact when it sits beside short numbers and long digit strings", () => {
    const task = decodeTask(
      parseJson(
        '{"id": 9007199254740993, "status": "Success", "createTime": "2026-11-23T10:00:00Z", "resultVideoURL": "https://cdn.example/1234567890123456789.mp4", "resultVideoId": 7}',
      ),
    );
    expect(task).toMatchObject({
      id: "9007199254740993",
      resultVideoId: "7",
      resultVideoURL: "https://cdn.example/1234567890123456789.mp4",
    });
  });

  it("refuses ids that are not integers, by either parser", () => {
    expect(() => idOf('{"id": 1.5}')).toThrow(DecodeError);
    expect(() => idOf('{"id": 12345678901234567.5}')).toThrow(DecodeError);
    expect(() => idOf('{"id": true}')).toThrow(DecodeError);
    expect(() => idOf('{"id": "12a"}')).toThrow(DecodeError);
  });

  // Review: an id past 64 bits was kept, and the task "followed" at every rerun.
  it("refuses ids past 64 bits", () => {
    expect(() => idOf('{"id": 18446744073709551616}')).toThrow(/ids are 64-bit/);
    expect(() => idOf('{"id": 99999999999999999999999}')).toThrow(DecodeError);
  });

  it("turns malformed JSON into a DecodeError, by either parser", () => {
    expect(() => parseJson('{"id": 42')).toThrow(DecodeError);
    expect(() => parseJson('{"id": 90071992547409931')).toThrow(DecodeError);
    expect(() => parseJson("<html>busy</html>")).toThrow(DecodeError);
  });
});
