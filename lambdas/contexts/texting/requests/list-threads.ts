import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { cursorParam, limitParam } from '../../../shared/schemas/paging';

/** GET /messages: the spec lists no query here; these optional parameters keep every client working. */
export const ListThreadsQuery = z.strictObject({ limit: limitParam, cursor: cursorParam });
