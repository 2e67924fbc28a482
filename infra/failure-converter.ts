// Temporal loads this module by path (client, worker and the workflow sandbox): failure messages
// and stack traces travel as an encoded payload, so the codec encrypts them too (DX-6).
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });

export const failureConverterPath = __filename;
