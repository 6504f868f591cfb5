import { createContext } from 'react';
import type { Api, LinkState } from './client';

export const ApiContext = createContext<Api | null>(null);
export const LinkContext = createContext<LinkState>('connecting');
