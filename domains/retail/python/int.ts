/**
 * A Python int where the data model declares a float: pydantic does not validate assignments, so a tool that
 * stores `round(0, 2)` (an int) in a float field keeps an int, and json.dumps writes `0`, not `0.0`.
 * JSON.stringify writes the number.
 */
export class PythonInt {
  constructor(readonly value: number) {}
  toJSON(): number {
    return this.value;
  }
}
