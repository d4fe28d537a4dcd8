/**
 * One codec per message of the iris protocol (PROTOCOL.md), used by both the driver and the
 * simulator: the three commands of output report 0x01 (with their parameters) and the three
 * feature reports (DEVICE_INFO, LIGHTS, STATUS). The driver encodes what it sends and decodes
 * what it reads; the simulator decodes what it receives and encodes what it answers, finding the
 * codec by command code or report id. The byte layouts are protocol.ts's encoders, each named
 * here once.
 *
 * Replies to commands (input report 0x10, type REPLY) and result chunks are the same framing for
 * every command: protocol.ts's encodeReply/decodeReply and chunkResult/decodeResult.
 */
import {
  decodeCaptureParams,
  decodeDeviceInfo,
  decodeLights,
  decodeStatus,
  encodeCaptureParams,
  encodeDeviceInfo,
  encodeLights,
  encodeStatus,
  IrisCommand,
  ReportId,
  type CaptureRequest,
  type IrisDeviceInfo,
  type IrisLights,
  type IrisStatusReport,
} from './protocol.js';

export interface IrisCommandCodec<Req> {
  readonly name: keyof typeof IrisCommand;
  readonly command: number;
  /** The request → the command's parameter bytes (the output report is framed by encodeCommand). */
  encodeRequest(req: Req): Uint8Array;
  /** Null when the parameters are not a valid request (the camera answers BAD_PARAM). */
  decodeRequest(params: Buffer): Req | null;
}

export interface IrisFeatureCodec<T> {
  readonly name: string;
  readonly reportId: number;
  /** Whole feature report, report id first. */
  encode(value: T): Buffer;
  decode(report: Buffer): T;
}

type Empty = Record<string, never>;
const noParams = { encodeRequest: (_req: Empty) => new Uint8Array(0), decodeRequest: (_params: Buffer): Empty => ({}) };

export const IrisCommands = {
  StartCapture: {
    name: 'StartCapture',
    command: IrisCommand.StartCapture,
    encodeRequest: encodeCaptureParams,
    decodeRequest: decodeCaptureParams,
  } satisfies IrisCommandCodec<CaptureRequest>,
  StopCapture: { name: 'StopCapture', command: IrisCommand.StopCapture, ...noParams } satisfies IrisCommandCodec<Empty>,
  ResendResult: { name: 'ResendResult', command: IrisCommand.ResendResult, ...noParams } satisfies IrisCommandCodec<Empty>,
} as const;

export const IrisFeatures = {
  DeviceInfo: {
    name: 'DeviceInfo',
    reportId: ReportId.DeviceInfo,
    encode: encodeDeviceInfo,
    decode: decodeDeviceInfo,
  } satisfies IrisFeatureCodec<IrisDeviceInfo>,
  Lights: { name: 'Lights', reportId: ReportId.Lights, encode: encodeLights, decode: decodeLights } satisfies IrisFeatureCodec<IrisLights>,
  Status: {
    name: 'Status',
    reportId: ReportId.Status,
    encode: encodeStatus,
    decode: decodeStatus,
  } satisfies IrisFeatureCodec<IrisStatusReport>,
} as const;

/** The codec of a command code (what the simulator looks up for each output report). */
export const IRIS_COMMANDS: ReadonlyMap<number, IrisCommandCodec<unknown>> = new Map(
  Object.values(IrisCommands).map((c) => [c.command, c as IrisCommandCodec<unknown>]),
);

/** A command's name for messages and logs. */
export function irisCommandName(code: number): string {
  return IRIS_COMMANDS.get(code)?.name ?? `0x${code.toString(16)}`;
}
